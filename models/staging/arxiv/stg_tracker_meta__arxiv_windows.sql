-- How far each arXiv window was fetched (see ingest/arxiv.py), one row per window and category set.

select
    window_from,
    window_to,
    string_split(categories, ',') as categories,
    total,
    next_start,
    complete,
    updated_at
from {{ source('tracker_meta', 'arxiv_windows') }}
