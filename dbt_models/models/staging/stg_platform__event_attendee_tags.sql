{%- set raw = source('platform', 'event_attendees__tags') %}
{%- set cols = platform_source_columns(raw) %}
{%- set raw_event_attendees = source('platform', 'event_attendees') %}
{%- set event_attendees_cols = platform_source_columns(raw_event_attendees) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- parent keys
        {{ platform_col(event_attendees_cols, 'id', 'string', 'event_attendees') }} as attendee_id,
        {{ platform_col(cols, '_dlt_list_idx', 'int', 'source') }} as tag_position,
        -- attributes
        {{ platform_col(cols, 'value', 'string', 'source') }} as tag

    from source
    {{ platform_parent_join('event_attendees', raw_event_attendees, event_attendees_cols, cols) }}

),

final as (

    select
        {{ surrogate_key(['attendee_id', 'tag_position']) }} as event_attendee_tag_key,
        *
    from renamed

)

select * from final
