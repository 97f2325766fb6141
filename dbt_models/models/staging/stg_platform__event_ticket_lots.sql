{%- set raw = source('platform', 'events__tickets__lots') %}
{%- set cols = platform_source_columns(raw) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- ids
        {{ platform_col(cols, 'id', 'string') }} as lot_id,
        {{ platform_col(cols, 'ticket_id', 'string') }} as ticket_id,
        {{ platform_col(cols, 'platform_product_id', 'string') }} as platform_product_id,
        -- attributes
        {{ platform_col(cols, 'name', 'string') }} as lot_name,
        {{ platform_col(cols, 'quantity', 'int') }} as quantity,
        {{ platform_col(cols, 'value', 'money') }} as lot_price,
        {{ platform_col(cols, 'is_active', 'bool') }} as is_active,
        -- timestamps
        {{ platform_col(cols, 'start_sale_at', 'timestamp') }} as sale_starts_at,
        {{ platform_col(cols, 'end_sale_at', 'timestamp') }} as sale_ends_at,
        {{ platform_col(cols, 'created_at', 'timestamp') }} as created_at,
        {{ platform_col(cols, 'modified_at', 'timestamp') }} as modified_at

    from source

)

select * from renamed
