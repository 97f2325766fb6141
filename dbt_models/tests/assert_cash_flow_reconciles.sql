-- Per currency, the monthly cash flow holds all the net revenue of fct_sales and all the confirmed
-- transfers of fct_transfers: no month of the data falls outside the month spine.
with flow as (

    select
        currency,
        sum(net_sales_credited_amount) as credited_amount,
        sum(transfers_out_amount) as transferred_amount
    from {{ ref('monthly_cash_flow') }}
    group by currency

),

sales as (

    select
        currency,
        sum(net_revenue_amount) as credited_amount
    from {{ ref('fct_sales') }}
    where was_paid
    group by currency

),

transfers as (

    select
        currency,
        sum(transfer_amount) as transferred_amount
    from {{ ref('fct_transfers') }}
    where is_confirmed
    group by currency

),

expected as (

    select
        coalesce(sales.currency, transfers.currency) as currency,
        coalesce(sales.credited_amount, 0) as credited_amount,
        coalesce(transfers.transferred_amount, 0) as transferred_amount
    from sales
    full outer join transfers
        on sales.currency = transfers.currency

)

select
    expected.currency,
    expected.credited_amount,
    flow.credited_amount as flow_credited_amount,
    expected.transferred_amount,
    flow.transferred_amount as flow_transferred_amount
from expected
left join flow
    on expected.currency = flow.currency
where
    flow.currency is null
    or flow.credited_amount != expected.credited_amount
    or flow.transferred_amount != expected.transferred_amount
