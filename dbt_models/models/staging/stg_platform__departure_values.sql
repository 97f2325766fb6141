{#- The values behind a departure: unlisted enum values and the originals of values that could not be
    converted, with the departure they belong to. Empty until a load records one. -#}
{%- set raw = source('platform_meta', '_platform_departures__values') %}
{%- set cols = platform_source_columns(raw) %}
{%- set raw_departures = source('platform_meta', '_platform_departures') %}
{%- set departures_cols = platform_source_columns(raw_departures) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- parent keys
        {{ platform_col(departures_cols, '_dlt_id', 'string', 'departures') }} as departure_id,
        {{ platform_col(cols, '_dlt_id', 'string', 'source') }} as departure_value_id,
        {{ platform_col(departures_cols, '_dlt_load_id', 'string', 'departures') }} as load_id,
        {{ platform_col(departures_cols, 'resource', 'string', 'departures') }} as resource_name,
        {{ platform_col(departures_cols, 'field_path', 'string', 'departures') }} as field_path,
        {{ platform_col(departures_cols, 'kind', 'string', 'departures') }} as departure_kind,
        -- the value
        {{ platform_col(cols, 'value', 'string', 'source') }} as departed_value,
        {{ platform_col(cols, 'record_id', 'string', 'source') }} as record_id,
        {{ platform_col(cols, 'records', 'int', 'source') }} as count_records

    from source
    {{ platform_parent_join('departures', raw_departures, departures_cols, cols) }}

)

select * from renamed
