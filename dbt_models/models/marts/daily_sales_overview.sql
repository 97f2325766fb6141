{#- Day x currency. Each measure is counted on the day its event happened: sales on their creation
    day, payments on their payment day, refunds on their refund day. A payment method the spec does
    not list has no column of its own: the `unlisted_method` columns hold it (sales_by_payment_method
    names it). Days and currencies are joined null-safe: a sale without them still counts, once. -#}
{%- set methods = var('platform_enums')['sale_payment_method'] %}

with sales as (

    select * from {{ ref('fct_sales') }}

),

created as (

    select
        account,
        created_on as sales_date,
        currency,
        count(*) as count_sales
    from sales
    group by account, created_on, currency

),

paid as (

    select
        account,
        cast(coalesce(paid_at, created_at) as date) as sales_date,
        currency,
        {% for method in methods -%}
            sum(case when payment_method = '{{ method }}' then 1 else 0 end) as count_paid_{{ snake_case(method) }},
            sum(case when payment_method = '{{ method }}' then gross_amount else 0 end) as gross_amount_{{ snake_case(method) }},
        {% endfor -%}
        -- a method the spec does not list (or none): counted here, shown by name in sales_by_payment_method
        sum(case when {{ unlisted('payment_method', methods) }} then 1 else 0 end) as count_paid_unlisted_method,
        sum(case when {{ unlisted('payment_method', methods) }} then gross_amount else 0 end)
            as gross_amount_unlisted_method,
        count(*) as count_paid_sales,
        sum(gross_amount) as gross_amount,
        sum(net_amount) as net_amount,
        sum(total_fees_amount) as fees_amount
    from sales
    where was_paid
    group by account, cast(coalesce(paid_at, created_at) as date), currency

),

refunded as (

    select
        account,
        cast(coalesce(refunded_at, updated_at) as date) as sales_date,
        currency,
        count(*) as count_refunded_sales,
        sum(refunded_amount) as refunded_amount
    from sales
    where is_refunded
    group by account, cast(coalesce(refunded_at, updated_at) as date), currency

),

days as (

    select
        account,
        sales_date,
        currency
    from created
    union
    select
        account,
        sales_date,
        currency
    from paid
    union
    select
        account,
        sales_date,
        currency
    from refunded

),

final as (

    select
        days.account,
        {{ surrogate_key(['days.sales_date', 'days.currency']) }} as day_currency_key,
        days.sales_date,
        days.currency,
        coalesce(created.count_sales, 0) as count_sales,
        coalesce(paid.count_paid_sales, 0) as count_paid_sales,
        coalesce(refunded.count_refunded_sales, 0) as count_refunded_sales,
        coalesce(paid.gross_amount, 0) as gross_amount,
        coalesce(paid.net_amount, 0) as net_amount,
        coalesce(paid.fees_amount, 0) as fees_amount,
        {% for method in methods -%}
            coalesce(paid.count_paid_{{ snake_case(method) }}, 0) as count_paid_{{ snake_case(method) }},
            coalesce(paid.gross_amount_{{ snake_case(method) }}, 0) as gross_amount_{{ snake_case(method) }},
        {% endfor -%}
        coalesce(paid.count_paid_unlisted_method, 0) as count_paid_unlisted_method,
        coalesce(paid.gross_amount_unlisted_method, 0) as gross_amount_unlisted_method,
        coalesce(refunded.refunded_amount, 0) as refunded_amount
    from days
    left join created
        on days.account = created.account
        and days.sales_date is not distinct from created.sales_date
        and days.currency is not distinct from created.currency
    left join paid
        on days.account = paid.account
        and days.sales_date is not distinct from paid.sales_date
        and days.currency is not distinct from paid.currency
    left join refunded
        on days.account = refunded.account
        and days.sales_date is not distinct from refunded.sales_date
        and days.currency is not distinct from refunded.currency

)

select * from final
