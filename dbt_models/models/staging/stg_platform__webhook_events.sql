{%- set raw = source('platform', 'webhook_origins__events') %}
{%- set cols = platform_source_columns(raw) %}
{%- set raw_webhook_origins = source('platform', 'webhook_origins') %}
{%- set webhook_origins_cols = platform_source_columns(raw_webhook_origins) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- parent keys
        {{ platform_col(webhook_origins_cols, 'id', 'string', 'webhook_origins') }} as origin_id,
        {{ platform_col(cols, '_dlt_list_idx', 'int', 'source') }} as event_position,
        -- attributes
        {{ platform_col(cols, 'name', 'string', 'source') }} as event_name,
        {{ platform_col(cols, 'description', 'string', 'source') }} as event_description

    from source
    {{ platform_parent_join('webhook_origins', raw_webhook_origins, webhook_origins_cols, cols) }}

),

final as (

    select
        {{ surrogate_key(['origin_id', 'event_position']) }} as webhook_event_key,
        *
    from renamed

)

select * from final
