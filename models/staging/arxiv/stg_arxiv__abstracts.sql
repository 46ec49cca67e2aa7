-- Abstracts for screening the pool. Local only: the raw table is never exported, and no mart
-- carries this text.

with source as (

    {{ latest_records(source('arxiv', 'abstracts')) }}

)

select
    record_key as arxiv_id,
    payload ->> 'abstract' as abstract
from source
