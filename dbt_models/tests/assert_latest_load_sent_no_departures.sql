-- Warns (its config below) when the newest completed load recorded departures from api-spec
-- or quarantined records: one row per resource_name, field path and kind, and one per quarantined record.
{{ config(severity='warn') }}

{%- set loads = source('platform', '_dlt_loads') %}
with latest_load as (

    select
        account,
        max(cast(load_id as double precision)) as load_number
    from ({{ platform_source_select(loads, platform_source_columns(loads)) }}) as loads
    where status = 0
    group by account

),

departures as (

    select
        departures.account,
        departures.resource_name,
        departures.field_path,
        departures.departure_kind as what,
        departures.count_records
    from {{ ref('stg_platform__departures') }} as departures
    inner join latest_load
        on departures.account = latest_load.account
        and cast(departures.load_id as double precision) = latest_load.load_number

),

quarantined as (

    select
        quarantine.account,
        quarantine.resource_name,
        cast(null as {{ dbt.type_string() }}) as field_path,
        'quarantined: ' || coalesce(quarantine.quarantine_reason, '') as what,
        1 as count_records
    from {{ ref('stg_platform__quarantine') }} as quarantine
    inner join latest_load
        on quarantine.account = latest_load.account
        and cast(quarantine.load_id as double precision) = latest_load.load_number

)

select * from departures
union all
select * from quarantined
