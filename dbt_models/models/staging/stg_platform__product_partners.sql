{%- set raw = source('platform', 'product_partners') %}
{%- set cols = platform_source_columns(raw) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- ids
        {{ platform_col(cols, 'product_id', 'string') }} as product_id,
        {{ platform_col(cols, 'id', 'string') }} as partner_id,
        -- attributes
        {{ platform_col(cols, 'name', 'string') }} as partner_name,
        {{ platform_col(cols, 'email', 'string') }} as partner_email,
        {{ platform_col(cols, 'commission__type', 'string') }} as commission_type,
        {{ platform_col(cols, 'commission__value', 'decimal') }} as commission_value,
        {{ platform_col(cols, 'commission__only_by_affiliate', 'bool') }} as is_commission_only_by_affiliate,
        {{ platform_col(cols, 'permission__can_manage_affiliates', 'bool') }} as can_manage_affiliates,
        {{ platform_col(cols, 'permission__can_refund', 'bool') }} as can_refund,
        {{ platform_col(cols, 'permission__can_view_customer_data', 'bool') }} as can_view_customer_data,
        -- deletion: marked when a complete scan no longer finds the record (issue 25)
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} as deleted_at,
        {{ platform_col(cols, '_platform_deleted_at', 'timestamp') }} is not null as is_deleted

    from source

),

final as (

    select
        {{ surrogate_key(['product_id', 'partner_id']) }} as product_partner_key,
        *
    from renamed

)

select * from final
