{%- set raw = source('platform', 'events__tickets') %}
{%- set cols = platform_source_columns(raw) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- ids
        {{ platform_col(cols, 'id', 'string') }} as ticket_id,
        {{ platform_col(cols, 'event_id', 'string') }} as event_id,
        -- attributes
        {{ platform_col(cols, 'name', 'string') }} as ticket_name,
        {{ platform_col(cols, 'is_paid', 'bool') }} as is_paid,
        {{ platform_col(cols, 'show_on_page', 'bool') }} as is_shown_on_page,
        {{ platform_col(cols, 'buy_limit', 'bool') }} as has_buy_limit,
        {{ platform_col(cols, 'is_unlimited', 'bool') }} as is_unlimited,
        {{ platform_col(cols, 'is_active', 'bool') }} as is_active,
        {{ platform_col(cols, 'buy_minimum', 'int') }} as buy_minimum,
        -- timestamps
        {{ platform_col(cols, 'created_at', 'timestamp') }} as created_at,
        {{ platform_col(cols, 'modified_at', 'timestamp') }} as modified_at

    from source

)

select * from renamed
