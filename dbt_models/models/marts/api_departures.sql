{#- Resource x field path x kind of departure from api-spec: when the pipeline first and last saw it,
    how many records it touched in the last load that had it, whether the warehouse's latest load has
    it, and the values the API sent that the spec does not list. What a dashboard shows as "the API
    sent something new" (issue 14). -#}
{%- set loads = source('platform', '_dlt_loads') %}

with departures as (

    select * from {{ ref('stg_platform__departures') }}

),

latest_load as (

    -- the newest completed load of the warehouse, with or without departures
    select
        account,
        max(cast(load_id as double precision)) as load_number
    from ({{ platform_source_select(loads, platform_source_columns(loads)) }}) as loads
    where status = 0
    group by account

),

seen as (

    select
        account,
        resource_name,
        field_path,
        departure_kind,
        min(loaded_at) as first_seen_at,
        max(loaded_at) as last_seen_at,
        max(cast(load_id as double precision)) as last_load_number,
        count(distinct load_id) as count_loads
    from departures
    group by account, resource_name, field_path, departure_kind

),

last_load as (

    select
        departures.account,
        departures.resource_name,
        departures.field_path,
        departures.departure_kind,
        departures.load_id as last_load_id,
        departures.count_records as count_records_last_load,
        departures.example_record_id
    from departures
    inner join seen
        on departures.account = seen.account
        and departures.resource_name = seen.resource_name
        and departures.field_path = seen.field_path
        and departures.departure_kind = seen.departure_kind
        and cast(departures.load_id as double precision) = seen.last_load_number

),

distinct_values as (

    select distinct
        account,
        resource_name,
        field_path,
        departure_kind,
        departed_value
    from {{ ref('stg_platform__departure_values') }}
    where departure_kind = 'unlisted_value'

),

unlisted_values as (

    select
        account,
        resource_name,
        field_path,
        departure_kind,
        count(*) as count_unlisted_values,
        {{ dbt.listagg('departed_value', "', '", 'order by departed_value') }} as unlisted_values
    from distinct_values
    group by account, resource_name, field_path, departure_kind

),

final as (

    select
        seen.account,
        {{ surrogate_key(['seen.resource_name', 'seen.field_path', 'seen.departure_kind']) }} as departure_key,
        seen.resource_name,
        seen.field_path,
        seen.departure_kind,
        seen.first_seen_at,
        seen.last_seen_at,
        last_load.last_load_id,
        seen.count_loads,
        last_load.count_records_last_load,
        last_load.example_record_id,
        seen.last_load_number = latest_load.load_number as is_in_latest_load,
        coalesce(unlisted_values.count_unlisted_values, 0) as count_unlisted_values,
        unlisted_values.unlisted_values
    from seen
    inner join latest_load
        on seen.account = latest_load.account
    inner join last_load
        on seen.account = last_load.account
        and seen.resource_name = last_load.resource_name
        and seen.field_path = last_load.field_path
        and seen.departure_kind = last_load.departure_kind
    left join unlisted_values
        on seen.account = unlisted_values.account
        and seen.resource_name = unlisted_values.resource_name
        and seen.field_path = unlisted_values.field_path
        and seen.departure_kind = unlisted_values.departure_kind

)

select * from final
