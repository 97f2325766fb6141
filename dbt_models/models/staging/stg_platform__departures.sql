{#- The departures from api-spec that the pipeline recorded, one row per resource, field path, kind
    and load. An empty relation until a load records one (the table does not exist before). -#}
{%- set raw = source('platform_meta', '_platform_departures') %}
{%- set cols = platform_source_columns(raw) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- ids
        {{ platform_col(cols, '_dlt_id', 'string') }} as departure_id,
        {{ platform_col(cols, '_dlt_load_id', 'string') }} as load_id,
        -- what departed
        {{ platform_col(cols, 'resource', 'string') }} as resource_name,
        {{ platform_col(cols, 'field_path', 'string') }} as field_path,
        {{ platform_col(cols, 'kind', 'string') }} as departure_kind,
        -- how often
        {{ platform_col(cols, 'records', 'int') }} as count_records,
        {{ platform_col(cols, 'example_record_id', 'string') }} as example_record_id

    from source

),

final as (

    select
        *,
        -- dlt's load id is the load's start as a unix timestamp (text); double precision keeps its
        -- microseconds (a 4-byte float would move it by a minute)
        to_timestamp(cast(load_id as double precision)) as loaded_at
    from renamed

)

select * from final
