-- Revenue by payment month and currency: the first headline figure of `make demo`, as an analysis
-- analysts can compile (`dbt compile --select revenue_by_month`) and run on any target.
select
    cast({{ dbt.date_trunc('month', 'coalesce(paid_at, created_at)') }} as date) as month_start,
    currency,
    count(*) as count_paid_sales,
    sum(gross_amount) as gross_amount,
    sum(refunded_amount) as refunded_amount,
    sum(net_revenue_amount) as net_revenue_amount
from {{ ref('fct_sales') }}
where was_paid
group by 1, 2
order by 1, 2
