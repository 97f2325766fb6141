{%- set raw = source('platform', 'webhook_origins') %}
{%- set cols = platform_source_columns(raw) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- ids
        {{ platform_col(cols, 'id', 'string') }} as origin_id,
        -- attributes
        {{ platform_col(cols, 'name', 'string') }} as origin_name,
        {{ platform_col(cols, 'prefix', 'string') }} as event_prefix

    from source

)

select * from renamed
