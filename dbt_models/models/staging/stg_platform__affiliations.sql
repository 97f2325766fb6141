{%- set raw = source('platform', 'affiliations') %}
{%- set cols = platform_source_columns(raw) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- ids
        {{ platform_col(cols, 'id', 'string') }} as affiliation_id,
        {{ platform_col(cols, 'product__id', 'string') }} as product_id,
        {{ platform_col(cols, 'customer__id', 'string') }} as affiliate_id,
        -- attributes
        {{ platform_col(cols, 'product__name', 'string') }} as product_name,
        {{ platform_col(cols, 'customer__name', 'string') }} as affiliate_name,
        {{ platform_col(cols, 'status', 'string') }} as affiliation_status,
        -- timestamps
        {{ platform_col(cols, 'requested_at', 'timestamp') }} as requested_at,
        {{ platform_col(cols, 'approved_at', 'timestamp') }} as approved_at,
        {{ platform_col(cols, 'created_at', 'timestamp') }} as created_at,
        {{ platform_col(cols, 'updated_at', 'timestamp') }} as updated_at,
        -- deletion: marked when a complete scan no longer finds the record (issue 25)
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} as deleted_at,
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} is not null as is_deleted

    from source

)

select * from renamed
