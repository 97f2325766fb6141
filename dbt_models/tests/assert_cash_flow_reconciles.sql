-- Per currency, the monthly cash flow holds all the net revenue of fct_sales and all the confirmed
-- transfers of fct_transfers: no month of the data falls outside the month spine.
with flow as (

    select
        account,
        currency,
        sum(net_sales_credited_amount) as credited_amount,
        sum(transfers_out_amount) as transferred_amount
    from {{ ref('monthly_cash_flow') }}
    group by account, currency

),

sales as (

    select
        account,
        currency,
        sum(net_revenue_amount) as credited_amount
    from {{ ref('fct_sales') }}
    where was_paid
    group by account, currency

),

transfers as (

    select
        account,
        currency,
        sum(transfer_amount) as transferred_amount
    from {{ ref('fct_transfers') }}
    where is_confirmed
    group by account, currency

),

expected as (

    select
        coalesce(sales.account, transfers.account) as account,
        coalesce(sales.currency, transfers.currency) as currency,
        coalesce(sales.credited_amount, 0) as credited_amount,
        coalesce(transfers.transferred_amount, 0) as transferred_amount
    from sales
    full outer join transfers
        on sales.account = transfers.account
        and sales.currency = transfers.currency

)

select
    expected.account,
    expected.currency,
    expected.credited_amount,
    flow.credited_amount as flow_credited_amount,
    expected.transferred_amount,
    flow.transferred_amount as flow_transferred_amount
from expected
left join flow
    on expected.account = flow.account
    and expected.currency = flow.currency
where
    flow.currency is null
    or flow.credited_amount != expected.credited_amount
    or flow.transferred_amount != expected.transferred_amount
