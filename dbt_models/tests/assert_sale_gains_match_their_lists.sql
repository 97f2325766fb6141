-- The partners' and affiliates' gains of a sale are the sums of the gains listed per partner and per
-- affiliate (`partners[]`, `affiliates[]`): the child tables and their parent agree.
{{ config(severity='warn') }}

with affiliates as (

    select
        account,
        sale_id,
        sum(net_gain_amount) as listed_amount
    from {{ ref('stg_platform__sale_affiliates') }}
    group by account, sale_id

),

partners as (

    select
        account,
        sale_id,
        sum(net_gain_amount) as listed_amount
    from {{ ref('stg_platform__sale_partners') }}
    group by account, sale_id

)

select
    sales.sale_id,
    sales.affiliates_gain_amount,
    affiliates.listed_amount as listed_affiliates_amount,
    sales.partners_gain_amount,
    partners.listed_amount as listed_partners_amount
from {{ ref('stg_platform__sales') }} as sales
left join affiliates
    on sales.account = affiliates.account
    and sales.sale_id = affiliates.sale_id
left join partners
    on sales.account = partners.account
    and sales.sale_id = partners.sale_id
where
    abs(coalesce(sales.affiliates_gain_amount, 0) - coalesce(affiliates.listed_amount, 0)) > 0.01
    or abs(coalesce(sales.partners_gain_amount, 0) - coalesce(partners.listed_amount, 0)) > 0.01
