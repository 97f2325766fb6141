{#- Buyers across sales. The spec gives no customer listing: a customer is a buyer id seen on a sale,
    described by their most recent sale. -#}
with sales as (

    select * from {{ ref('fct_sales') }}
    where buyer_id is not null

),

latest as (

    select
        account,
        buyer_id,
        buyer_name,
        buyer_email,
        buyer_city,
        buyer_state,
        row_number() over (partition by account, buyer_id order by created_at desc, sale_id desc) as recency_rank
    from sales

),

aggregated as (

    select
        account,
        buyer_id,
        min(currency) as currency,
        count(distinct currency) as count_currencies,
        count(*) as count_sales,
        sum(case when was_paid then 1 else 0 end) as count_orders,
        sum(case when is_refunded then 1 else 0 end) as count_refunded_orders,
        min(created_at) as first_sale_at,
        min(case when was_paid then coalesce(paid_at, created_at) end) as first_purchase_at,
        max(case when was_paid then coalesce(paid_at, created_at) end) as last_purchase_at,
        sum(case when was_paid then gross_amount else 0 end) as gross_amount,
        sum(refunded_amount) as refunded_amount,
        sum(net_revenue_amount) as net_revenue_amount
    from sales
    group by account, buyer_id

),

final as (

    select
        aggregated.account,
        aggregated.buyer_id as customer_id,
        latest.buyer_name as customer_name,
        latest.buyer_email as customer_email,
        latest.buyer_city as city,
        latest.buyer_state as state,
        aggregated.currency,
        aggregated.count_currencies,
        aggregated.count_sales,
        aggregated.count_orders,
        aggregated.count_refunded_orders,
        aggregated.first_sale_at,
        aggregated.first_purchase_at,
        aggregated.last_purchase_at,
        aggregated.gross_amount,
        aggregated.refunded_amount,
        aggregated.net_revenue_amount
    from aggregated
    inner join latest
        on aggregated.account = latest.account
        and aggregated.buyer_id = latest.buyer_id
        and latest.recency_rank = 1

)

select * from final
