-- The proposal screen (docs/definitions.md#the-public-record), defined once for the proposals mart
-- and the evaluation (bench/screens.py): threads that ask for or add a method, in English or
-- Chinese. A thread is screened in when
--   * it cites a general method's paper (link, id or full title) and asks for something (a pull
--     request, a request label, a request in its opening post) or names a catalog method; or
--   * it asks (a pull request, a request label, a request in its title, a feature-request form
--     in its opening post) and its title names a method: a catalog method (its short name such as
--     DAPO or REINFORCE++, or its id's words such as dr_grpo for Dr. GRPO), a method-like acronym
--     (…PO, TIS, GAE), a part of an algorithm (a loss, estimator, clipping, sampling, masking,
--     correction …) or an algorithm in general.
-- Left out: bug fixes and chores; titles about infrastructure (a model, backend, engine,
-- hardware, cluster) that name no part of an algorithm, so supporting a model for GRPO is not a
-- proposal; titles about metrics or logging that name no catalog method.

with threads as (

    select
        t.framework,
        t.thread_number,
        t.kind,
        coalesce(x.opening_text, '') as opening_text,
        split_part(coalesce(x.opening_text, ''), chr(10), 1) as title,
        len(list_filter(t.labels, lambda l: regexp_matches(
            l, 'feature|enhancement|request|proposal|rfc|new (algorithm|method)', 'i'
        ))) > 0 as has_request_label
    from {{ ref('stg_github__threads') }} as t
    left join {{ ref('stg_github__thread_texts') }} as x
        on t.framework = x.framework and t.thread_number = x.thread_number
    where t.gone is null

),

asks as (

    select
        framework,
        thread_number,
        opening_text,
        title,
        kind = 'pull_request'
        or has_request_label
        or regexp_matches(
            title,
            '\b(support\w*|add(s|ed|ing)?|implement\w*|integrat\w*|request\w*|propos\w*|feat'
            || '|features?|rfc|plans?|roadmap|introduc\w*|enable|would (you|it|an?|the|this)'
            || '|is there|any plans?|new)\b|支持|实现|新增|添加|增加|加入|引入|计划|希望|能否|是否|请求',
            'i'
        )
        or regexp_matches(
            opening_text,
            'feature request|\[feature\]|solution you.d like|\bproposal\b'
            || '|功能请求|新功能|需求描述',
            'i'
        ) as is_asking,
        -- a part of an algorithm, by words or by an acronym written in capitals
        regexp_matches(
            title,
            '\b(loss(es)?|objectives?|estimators?|advantages?|baselines?|importance[- ]sampling'
            || '|importance (ratio|weight)s?|off-policy|distillation|clip\w*|trust[- ]region|kl'
            || '|entropy|normali[sz]\w*|reward shaping|penalt\w*|dynamic sampling'
            || '|rejection sampling|over-?long|filter\w*|mask\w*|correction|replay|token-level'
            || '|sequence-level|reinforce\w*|policy gradients?|policy optimi[sz]ation|self-play'
            || '|preference optimi[sz]ation'
            || '|(critic|value|reward|reference) (models?|functions?|heads?))\b'
            || '|损失|优势|裁剪|采样|重要性|熵|奖励塑形|惩罚|蒸馏|过滤|掩码|归一化',
            'i'
        )
        or regexp_matches(title, '\b(T?IS|MIS|GAE)\b') as names_part,
        -- a method-like acronym not (yet) in the catalog: ARPO, GFPO
        regexp_matches(title, '\b[A-Z][A-Za-z0-9-]*PO\b') as names_acronym,
        regexp_matches(title, '\b(algorithms?|methods?|trainers?)\b|算法', 'i') as names_algorithm,
        regexp_matches(
            title,
            '\b(models?|backends?|engines?|vllm|sglang|megatron|fsdp\w*|deepspeed|docker|npu'
            || '|ascend|amd|rocm|gpus?|qwen\w*|llama\w*|deepseek\w*|gemma\w*|mistral\w*|glm\w*'
            || '|vlms?|multi-?modal|lora|tokenizers?|datasets?|docs?|checkpoint\w*|ray|slurm|k8s'
            || '|kubernetes|multi-?node|nodes?|cluster|distributed)\b|模型|后端|引擎|显卡|多机',
            'i'
        ) as names_infrastructure,
        regexp_matches(
            title, '\b(metrics?|logging|logs?|monitor\w*|wandb|tensorboard|dashboard)\b|指标|日志', 'i'
        ) as names_metrics,
        -- bug fixes and chores are not proposals
        regexp_matches(
            title,
            '^\W*(\[[^\]]*\]\s*)*(fix\w*|bugfix|hotfix|chore|docs?|tests?|ci|refactor|revert)\b'
            || '|\[bug\]|\bbug\b|修复',
            'i'
        ) as is_fix
    from threads

),

-- how a catalog method is written in a title: its short name (macros/method_short_name.sql) or
-- its id's words (dr_grpo: "Dr. GRPO", "dr-grpo"), both as whole words of the title reduced to
-- lower-case letters, digits and + (string search: a join on per-method regular expressions
-- compiles one per title and method)
method_names as (

    select method_id, {{ title_words(method_short_name('name')) }} as words
    from {{ ref('stg_seeds__method_catalog') }}
    where {{ is_method_short_name(method_short_name('name')) }}
    union
    select method_id, {{ title_words('method_id') }} as words
    from {{ ref('stg_seeds__method_catalog') }}
    where contains(method_id, '_')

),

named as (

    select a.framework, a.thread_number, list_sort(list_distinct(list(n.method_id))) as method_ids
    from asks as a
    inner join method_names as n on contains({{ title_words('a.title') }}, n.words)
    group by a.framework, a.thread_number

),

-- the papers of general methods: catalog sources and papers reviewed as general methods
method_papers as (

    select source_arxiv_id as arxiv_id, method_id
    from {{ ref('stg_seeds__method_catalog') }}
    where source_arxiv_id is not null
    union
    select arxiv_id, null as method_id
    from {{ ref('stg_seeds__paper_labels') }}
    where label = 'general_method'

),

cited as (

    select
        m.framework,
        m.thread_number,
        list_sort(list_distinct(list(m.arxiv_id))) as arxiv_ids,
        list_sort(list_distinct(list(p.method_id))) as method_ids
    from {{ ref('int_thread_paper_matches') }} as m
    inner join method_papers as p on m.arxiv_id = p.arxiv_id
    where m.match_kind <> 'name_only'
    group by m.framework, m.thread_number

)

select
    a.framework,
    a.thread_number,
    c.arxiv_ids,
    list_sort(list_distinct(flatten([coalesce(c.method_ids, []), coalesce(n.method_ids, [])])))
        as method_ids
from asks as a
left join cited as c on a.framework = c.framework and a.thread_number = c.thread_number
left join named as n on a.framework = n.framework and a.thread_number = n.thread_number
where
    (
        c.framework is not null
        and (
            a.is_asking
            or n.framework is not null
            or regexp_matches(
                a.opening_text,
                '\b(support(ing)?|add(ing)?|implement(ing|ation)?|integrat\w*|request\w*'
                || '|propos\w*)\b|支持|实现|新增|添加',
                'i'
            )
        )
    )
    or (
        a.is_asking
        and not a.is_fix
        and (n.framework is not null or a.names_acronym or a.names_part or a.names_algorithm)
        and (a.names_part or not a.names_infrastructure)
        and (n.framework is not null or not a.names_metrics)
    )
