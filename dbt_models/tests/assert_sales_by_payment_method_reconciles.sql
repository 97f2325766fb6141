-- Per day and currency, the paid sales by payment method add up to daily_sales_overview's paid
-- sales and gross: no method, listed or not, is lost or counted twice.
with by_method as (

    select
        account,
        sales_date,
        currency,
        {{ surrogate_key(['sales_date', 'currency']) }} as day_currency_key,
        sum(count_paid_sales) as count_paid_sales,
        sum(gross_amount) as gross_amount
    from {{ ref('sales_by_payment_method') }}
    group by account, sales_date, currency

),

overview as (

    select
        account,
        sales_date,
        currency,
        {{ surrogate_key(['sales_date', 'currency']) }} as day_currency_key,
        count_paid_sales,
        gross_amount
    from {{ ref('daily_sales_overview') }}
    where count_paid_sales > 0

)

select
    coalesce(overview.account, by_method.account) as account,
    coalesce(overview.sales_date, by_method.sales_date) as sales_date,
    coalesce(overview.currency, by_method.currency) as currency,
    overview.count_paid_sales as overview_count_paid_sales,
    by_method.count_paid_sales,
    overview.gross_amount as overview_gross_amount,
    by_method.gross_amount
from overview
-- null-safe through the key (nulls hash as '_null_'): PostgreSQL cannot full-join on `is not distinct from`
full outer join by_method
    on overview.account = by_method.account
    and overview.day_currency_key = by_method.day_currency_key
where
    overview.count_paid_sales is distinct from by_method.count_paid_sales
    or overview.gross_amount is distinct from by_method.gross_amount
