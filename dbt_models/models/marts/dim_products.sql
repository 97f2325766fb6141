with products as (

    select * from {{ ref('stg_platform__products') }}
    where not is_deleted

),

campaigns as (

    select
        account,
        product_id,
        count(*) as count_campaigns,
        sum(case when is_active then 1 else 0 end) as count_active_campaigns
    from {{ ref('stg_platform__product_campaigns') }}
    where not is_deleted
    group by account, product_id

),

partners as (

    select
        account,
        product_id,
        count(*) as count_partners
    from {{ ref('stg_platform__product_partners') }}
    where not is_deleted
    group by account, product_id

),

affiliations as (

    select
        account,
        product_id,
        count(distinct case when affiliation_status = 'approved' then affiliate_id end)
            as count_approved_affiliates
    from {{ ref('stg_platform__affiliations') }}
    where not is_deleted
    group by account, product_id

),

final as (

    select
        -- ids
        products.account,
        products.product_id,
        products.producer_id,

        -- attributes
        products.product_name,
        products.product_description,
        products.author,
        products.image_url,
        products.product_type,
        products.product_status,
        products.moderation_status,
        products.product_status = 'active' as is_active,

        -- price and payment
        products.payment_type,
        products.price_amount,
        products.price_currency,
        products.accepts_bankslip,
        products.accepts_pix,
        products.accepts_card,
        products.accepts_multiple_cards,

        -- counts
        coalesce(campaigns.count_campaigns, 0) as count_campaigns,
        coalesce(campaigns.count_active_campaigns, 0) as count_active_campaigns,
        coalesce(partners.count_partners, 0) as count_partners,
        coalesce(affiliations.count_approved_affiliates, 0) as count_approved_affiliates,

        -- timestamps
        products.created_at,
        products.updated_at

    from products
    left join campaigns
        on products.account = campaigns.account
        and products.product_id = campaigns.product_id
    left join partners
        on products.account = partners.account
        and products.product_id = partners.product_id
    left join affiliations
        on products.account = affiliations.account
        and products.product_id = affiliations.product_id

)

select * from final
