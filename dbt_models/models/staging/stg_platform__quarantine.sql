{#- Records the pipeline could not key and so did not load into their table, as they came (secrets
    removed by the pipeline). Empty until a load quarantines one. -#}
{%- set raw = source('platform_meta', '_platform_quarantine') %}
{%- set cols = platform_source_columns(raw) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- ids
        {{ platform_col(cols, '_dlt_id', 'string') }} as quarantine_id,
        {{ platform_col(cols, '_dlt_load_id', 'string') }} as load_id,
        {{ platform_col(cols, 'record_id', 'string') }} as record_id,
        -- what and why
        {{ platform_col(cols, 'resource', 'string') }} as resource_name,
        {{ platform_col(cols, 'reason', 'string') }} as quarantine_reason,
        {{ platform_col(cols, 'raw_json', 'string') }} as raw_json

    from source

),

final as (

    select
        *,
        to_timestamp(cast(load_id as double precision)) as loaded_at
    from renamed

)

select * from final
