{#- Month x currency: the net sales credited to the balance against the confirmed transfers out of it. -#}
with sales as (

    select * from {{ ref('fct_sales') }}
    where was_paid

),

transfers as (

    select * from {{ ref('fct_transfers') }}
    where is_confirmed

),

credited as (

    select
        account,
        cast({{ dbt.date_trunc('month', 'coalesce(credited_at, paid_at, created_at)') }} as date) as month_start,
        currency,
        count(*) as count_credited_sales,
        sum(net_revenue_amount) as net_sales_credited_amount
    from sales
    group by account, cast({{ dbt.date_trunc('month', 'coalesce(credited_at, paid_at, created_at)') }} as date), currency

),

transferred as (

    select
        account,
        cast({{ dbt.date_trunc('month', 'transfer_on') }} as date) as month_start,
        currency,
        count(*) as count_transfers,
        sum(transfer_amount) as transfers_out_amount
    from transfers
    group by account, cast({{ dbt.date_trunc('month', 'transfer_on') }} as date), currency

),

currencies as (

    select
        credited.account,
        credited.currency
    from credited
    union
    select
        transferred.account,
        transferred.currency
    from transferred

),

grid as (

    select
        months.account,
        months.month_start,
        currencies.currency
    from {{ ref('int_platform__months') }} as months
    inner join currencies
        on months.account = currencies.account

),

flows as (

    select
        grid.account,
        grid.month_start,
        grid.currency,
        coalesce(credited.count_credited_sales, 0) as count_credited_sales,
        coalesce(credited.net_sales_credited_amount, 0) as net_sales_credited_amount,
        coalesce(transferred.count_transfers, 0) as count_transfers,
        coalesce(transferred.transfers_out_amount, 0) as transfers_out_amount
    from grid
    left join credited
        on grid.account = credited.account
        and grid.month_start = credited.month_start
        and grid.currency = credited.currency
    left join transferred
        on grid.account = transferred.account
        and grid.month_start = transferred.month_start
        and grid.currency = transferred.currency

),

final as (

    select
        account,
        {{ surrogate_key(['month_start', 'currency']) }} as month_currency_key,
        month_start,
        currency,
        count_credited_sales,
        net_sales_credited_amount,
        count_transfers,
        transfers_out_amount,
        net_sales_credited_amount - transfers_out_amount as net_cash_flow_amount,
        sum(net_sales_credited_amount - transfers_out_amount) over (
            partition by account, currency
            order by month_start
            rows between unbounded preceding and current row
        ) as cumulative_balance_amount
    from flows

)

select * from final
