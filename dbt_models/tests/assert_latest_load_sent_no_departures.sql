-- Warns (see _singular_tests.yml) when the newest completed load recorded departures from api-spec
-- or quarantined records: one row per resource_name, field path and kind, and one per quarantined record.
with latest_load as (

    select max(cast(load_id as double precision)) as load_number
    from {{ source('platform', '_dlt_loads') }}
    where status = 0

),

departures as (

    select
        departures.resource_name,
        departures.field_path,
        departures.departure_kind as what,
        departures.count_records
    from {{ ref('stg_platform__departures') }} as departures
    inner join latest_load
        on cast(departures.load_id as double precision) = latest_load.load_number

),

quarantined as (

    select
        quarantine.resource_name,
        cast(null as {{ dbt.type_string() }}) as field_path,
        'quarantined: ' || coalesce(quarantine.quarantine_reason, '') as what,
        1 as count_records
    from {{ ref('stg_platform__quarantine') }} as quarantine
    inner join latest_load
        on cast(quarantine.load_id as double precision) = latest_load.load_number

)

select * from departures
union all
select * from quarantined
