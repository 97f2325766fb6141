with items as (

    select * from {{ ref('stg_platform__sale_items') }}

),

sales as (

    select * from {{ ref('int_platform__sales_amounts') }}

),

final as (

    select
        -- ids
        items.account,
        items.sale_item_key,
        items.sale_id,
        items.item_position,
        items.item_id,
        items.product_id,

        -- item
        items.item_description,
        items.quantity,
        items.unit_value_amount,
        items.line_value_amount,
        coalesce(items.discount_amount, 0) as discount_amount,
        coalesce(items.line_value_currency, sales.currency) as currency,
        items.freight_type,
        items.freight_deadline,
        items.tracking_code,

        -- the sale
        sales.sale_status,
        sales.was_paid,
        sales.is_refunded,
        sales.buyer_id,
        sales.product_id as sale_product_id,
        sales.payment_method,
        sales.created_at,
        sales.paid_at

    from items
    inner join sales
        on items.account = sales.account
        and items.sale_id = sales.sale_id

)

select * from final
