{#- Day x currency x payment method of the paid sales, on their payment day as in daily_sales_overview:
    every method as the API sent it, so a method the spec does not list (a new wallet) is a row of its
    own under its own name, and a sale without a method is the row whose method is null. -#}
{%- set methods = var('platform_enums')['sale_payment_method'] %}

with sales as (

    select * from {{ ref('fct_sales') }}
    where was_paid

),

aggregated as (

    select
        account,
        cast(coalesce(paid_at, created_at) as date) as sales_date,
        currency,
        payment_method,
        count(*) as count_paid_sales,
        sum(gross_amount) as gross_amount,
        sum(net_amount) as net_amount,
        sum(total_fees_amount) as fees_amount,
        sum(net_revenue_amount) as net_revenue_amount
    from sales
    group by account, cast(coalesce(paid_at, created_at) as date), currency, payment_method

),

final as (

    select
        account,
        {{ surrogate_key(['sales_date', 'currency', 'payment_method']) }} as day_currency_method_key,
        sales_date,
        currency,
        payment_method,
        case when {{ unlisted('payment_method', methods) }} then false else true end as is_listed_method,
        count_paid_sales,
        coalesce(gross_amount, 0) as gross_amount,
        coalesce(net_amount, 0) as net_amount,
        coalesce(fees_amount, 0) as fees_amount,
        coalesce(net_revenue_amount, 0) as net_revenue_amount
    from aggregated

)

select * from final
