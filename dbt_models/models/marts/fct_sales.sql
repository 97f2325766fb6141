with sales as (

    select * from {{ ref('int_platform__sales_amounts') }}

),

items as (

    select
        account,
        sale_id,
        count(*) as count_items,
        sum(quantity) as total_quantity
    from {{ ref('stg_platform__sale_items') }}
    group by account, sale_id

),

affiliates as (

    select
        account,
        sale_id,
        count(*) as count_affiliates
    from {{ ref('stg_platform__sale_affiliates') }}
    group by account, sale_id

),

partners as (

    select
        account,
        sale_id,
        count(*) as count_partners
    from {{ ref('stg_platform__sale_partners') }}
    group by account, sale_id

),

final as (

    select
        -- ids
        sales.account,
        sales.sale_id,
        sales.contract_id,
        sales.product_id,
        sales.buyer_id,
        sales.affiliate_id,
        sales.producer_id,

        -- status
        sales.sale_status,
        sales.recovering_status,
        sales.was_paid,
        sales.is_refunded,

        -- amounts (all in the sale's currency)
        sales.currency,
        sales.gross_amount,
        sales.net_amount,
        sales.total_amount,
        sales.total_with_interest_amount,
        sales.fee_amount,
        sales.company_x_fee_amount,
        sales.installment_settlement_fee_amount,
        sales.other_fees_amount,
        sales.total_fees_amount,
        sales.partners_gain_amount,
        sales.affiliates_gain_amount,
        sales.refunded_amount,
        sales.net_revenue_amount,
        sales.installments,

        -- payment
        sales.payment_method,
        sales.payment_detail,

        -- refund
        sales.refund_type,
        sales.refund_motive,
        sales.refund_requested_at,
        sales.refunded_at,

        -- product and offer
        sales.product_name,
        sales.product_type,
        sales.product_billing_type,
        sales.offer_name,

        -- buyer and affiliate
        sales.buyer_name,
        sales.buyer_email,
        sales.buyer_city,
        sales.buyer_state,
        sales.affiliate_name,

        -- marketing
        sales.utm_source,
        sales.utm_medium,
        sales.utm_campaign,
        sales.utm_content,
        sales.utm_term,
        sales.is_infinite_funnel,
        coalesce(sales.has_order_bump, false) as has_order_bump,
        coalesce(sales.is_order_bump_main_sale, false) as is_order_bump_main_sale,
        sales.order_bump_main_sale_id,
        sales.order_bump_main_sale_id is not null as is_order_bump,

        -- counts of the sale's lists
        coalesce(items.count_items, 0) as count_items,
        coalesce(items.total_quantity, 0) as total_quantity,
        coalesce(affiliates.count_affiliates, 0) as count_affiliates,
        coalesce(partners.count_partners, 0) as count_partners,

        -- dates
        sales.created_at,
        sales.updated_at,
        sales.paid_at,
        sales.due_at,
        sales.credited_at,
        cast(sales.created_at as date) as created_on,
        cast(sales.paid_at as date) as paid_on,
        cast(sales.due_at as date) as due_on,
        cast(sales.credited_at as date) as credited_on

    from sales
    left join items
        on sales.account = items.account
        and sales.sale_id = items.sale_id
    left join affiliates
        on sales.account = affiliates.account
        and sales.sale_id = affiliates.sale_id
    left join partners
        on sales.account = partners.account
        and sales.sale_id = partners.sale_id

)

select * from final
