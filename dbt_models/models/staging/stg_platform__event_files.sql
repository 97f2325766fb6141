{%- set raw = source('platform', 'events__files') %}
{%- set cols = platform_source_columns(raw) %}
{%- set raw_events = source('platform', 'events') %}
{%- set events_cols = platform_source_columns(raw_events) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- parent keys
        {{ platform_col(events_cols, 'id', 'string', 'events') }} as event_id,
        {{ platform_col(cols, '_dlt_list_idx', 'int', 'source') }} as file_position,
        -- attributes
        {{ platform_col(cols, 'value', 'string', 'source') }} as file_url

    from source
    {{ platform_parent_join('events', raw_events, events_cols, cols) }}

),

final as (

    select
        {{ surrogate_key(['event_id', 'file_position']) }} as event_file_key,
        *
    from renamed

)

select * from final
