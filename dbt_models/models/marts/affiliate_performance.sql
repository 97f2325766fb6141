{#- Affiliate x product: the affiliation (if any) and the sales credited to the affiliate with the
    gains the sales list for them. -#}
with affiliations as (

    select
        account,
        affiliate_id,
        product_id,
        max(affiliate_name) as affiliate_name,
        count(*) as count_affiliations,
        max(case when affiliation_status = 'approved' then 1 else 0 end) = 1 as has_approved_affiliation,
        min(case when affiliation_status = 'approved' then approved_at end) as first_approved_at
    from {{ ref('stg_platform__affiliations') }}
    where not is_deleted
    group by account, affiliate_id, product_id

),

sales as (

    select
        account,
        affiliate_id,
        product_id,
        max(affiliate_name) as affiliate_name,
        min(currency) as currency,
        count(*) as count_sales,
        sum(case when was_paid then 1 else 0 end) as count_paid_sales,
        sum(case when is_refunded then 1 else 0 end) as count_refunded_sales,
        sum(case when was_paid then gross_amount else 0 end) as gross_amount,
        sum(net_revenue_amount) as producer_net_revenue_amount,
        min(created_at) as first_sale_at,
        max(created_at) as last_sale_at
    from {{ ref('fct_sales') }}
    where affiliate_id is not null
    group by account, affiliate_id, product_id

),

gains as (

    select
        account,
        affiliate_id,
        product_id,
        sum(case when was_paid and not is_refunded then net_gain_amount else 0 end) as affiliate_gain_amount
    from {{ ref('int_platform__sale_affiliates') }}
    group by account, affiliate_id, product_id

),

pairs as (

    select
        account,
        affiliate_id,
        product_id
    from affiliations
    union
    select
        account,
        affiliate_id,
        product_id
    from sales
    union
    select
        account,
        affiliate_id,
        product_id
    from gains

),

final as (

    select
        pairs.account,
        {{ surrogate_key(['pairs.affiliate_id', 'pairs.product_id']) }} as affiliate_product_key,
        pairs.affiliate_id,
        pairs.product_id,
        coalesce(affiliations.affiliate_name, sales.affiliate_name) as affiliate_name,
        coalesce(affiliations.has_approved_affiliation, false) as has_approved_affiliation,
        affiliations.first_approved_at,
        coalesce(affiliations.count_affiliations, 0) as count_affiliations,
        sales.currency,
        coalesce(sales.count_sales, 0) as count_sales,
        coalesce(sales.count_paid_sales, 0) as count_paid_sales,
        coalesce(sales.count_refunded_sales, 0) as count_refunded_sales,
        coalesce(sales.gross_amount, 0) as gross_amount,
        coalesce(sales.producer_net_revenue_amount, 0) as producer_net_revenue_amount,
        coalesce(gains.affiliate_gain_amount, 0) as affiliate_gain_amount,
        sales.first_sale_at,
        sales.last_sale_at
    from pairs
    left join affiliations
        on pairs.account = affiliations.account
        and pairs.affiliate_id = affiliations.affiliate_id
        and pairs.product_id = affiliations.product_id
    left join sales
        on pairs.account = sales.account
        and pairs.affiliate_id = sales.affiliate_id
        and pairs.product_id = sales.product_id
    left join gains
        on pairs.account = gains.account
        and pairs.affiliate_id = gains.affiliate_id
        and pairs.product_id = gains.product_id

)

select * from final
