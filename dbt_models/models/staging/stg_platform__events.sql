{%- set raw = source('platform', 'events') %}
{%- set cols = platform_source_columns(raw) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- ids
        {{ platform_col(cols, 'id', 'string') }} as event_id,
        {{ platform_col(cols, 'user_id', 'string') }} as owner_user_id,
        -- attributes
        {{ platform_col(cols, 'type', 'string') }} as event_type,
        {{ platform_col(cols, 'title', 'string') }} as event_title,
        {{ platform_col(cols, 'description', 'string') }} as event_description,
        {{ platform_col(cols, 'sale_url', 'string') }} as sale_url,
        {{ platform_col(cols, 'image_url', 'string') }} as image_url,
        {{ platform_col(cols, 'stream_url', 'string') }} as stream_url,
        {{ platform_col(cols, 'reserve_time', 'int') }} as reserve_time_minutes,
        {{ platform_col(cols, 'is_live', 'bool') }} as is_live,
        {{ platform_col(cols, 'active_precheckout', 'bool') }} as is_precheckout_active,
        -- address
        {{ platform_col(cols, 'address__place', 'string') }} as place,
        {{ platform_col(cols, 'address__country', 'string') }} as country,
        {{ platform_col(cols, 'address__state', 'string') }} as state,
        {{ platform_col(cols, 'address__city', 'string') }} as city,
        {{ platform_col(cols, 'address__district', 'string') }} as district,
        {{ platform_col(cols, 'address__street', 'string') }} as street,
        {{ platform_col(cols, 'address__complement', 'string') }} as address_complement,
        {{ platform_col(cols, 'address__number', 'string') }} as address_number,
        {{ platform_col(cols, 'address__zip', 'string') }} as zip_code,
        {{ platform_col(cols, 'address__map_url', 'string') }} as map_url,
        {{ platform_col(cols, 'address__geolocation__latitude', 'float') }} as latitude,
        {{ platform_col(cols, 'address__geolocation__longitude', 'float') }} as longitude,
        -- timestamps
        {{ platform_col(cols, 'start_at', 'timestamp') }} as starts_at,
        {{ platform_col(cols, 'end_at', 'timestamp') }} as ends_at,
        {{ platform_col(cols, 'created_at', 'timestamp') }} as created_at,
        {{ platform_col(cols, 'modified_at', 'timestamp') }} as modified_at,
        -- deletion: marked when its details answered 404 (issue 25)
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} as deleted_at,
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} is not null as is_deleted

    from source

)

select * from renamed
