{%- set raw = source('platform', 'webhook_origins__events__metadata') %}
{%- set cols = platform_source_columns(raw) %}
{%- set raw_webhook_events = source('platform', 'webhook_origins__events') %}
{%- set webhook_events_cols = platform_source_columns(raw_webhook_events) %}
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
        {{ platform_col(webhook_events_cols, 'name', 'string', 'webhook_events') }} as event_name,
        {{ platform_col(webhook_events_cols, '_dlt_list_idx', 'int', 'webhook_events') }} as event_position,
        {{ platform_col(cols, '_dlt_list_idx', 'int', 'source') }} as field_position,
        -- attributes
        {{ platform_col(cols, 'value', 'string', 'source') }} as field_name

    from source
    {{ platform_parent_join('webhook_events', raw_webhook_events, webhook_events_cols, cols) }}
    {{ platform_parent_join('webhook_origins', raw_webhook_origins, webhook_origins_cols, webhook_events_cols, child_alias='webhook_events') }}

),

final as (

    select
        {{ surrogate_key(['origin_id', 'event_position', 'field_position']) }} as webhook_event_metadata_key,
        *
    from renamed

)

select * from final
