{#- Sale affiliates unnested with what affiliate reports need from their sale. -#}
with sale_affiliates as (

    select * from {{ ref('stg_platform__sale_affiliates') }}

),

sales as (

    select * from {{ ref('int_platform__sales_amounts') }}

),

joined as (

    select
        sale_affiliates.account,
        sale_affiliates.sale_affiliate_key,
        sale_affiliates.sale_id,
        sale_affiliates.affiliate_id,
        sale_affiliates.affiliate_name,
        sale_affiliates.affiliate_email,
        sale_affiliates.net_gain_amount,
        sale_affiliates.net_gain_currency,
        sales.product_id,
        sales.sale_status,
        sales.was_paid,
        sales.is_refunded,
        sales.currency,
        sales.created_at,
        sales.paid_at,
        coalesce(sales.affiliate_id = sale_affiliates.affiliate_id, false) as is_credited_affiliate
    from sale_affiliates
    inner join sales
        on sale_affiliates.account = sales.account
        and sale_affiliates.sale_id = sales.sale_id

)

select * from joined
