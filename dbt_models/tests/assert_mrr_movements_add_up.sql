-- Each month's MRR is the previous month's plus the new and expansion MRR, minus the contraction and
-- churned MRR: the movements explain the whole change, nothing is left over.
with months as (

    select
        account,
        month_start,
        currency,
        mrr_amount,
        new_mrr_amount,
        expansion_mrr_amount,
        contraction_mrr_amount,
        churned_mrr_amount,
        lag(mrr_amount) over (partition by account, currency order by month_start) as previous_mrr_amount
    from {{ ref('subscriptions_mrr_monthly') }}

)

select *
from months
where
    abs(
        coalesce(previous_mrr_amount, 0) + new_mrr_amount + expansion_mrr_amount
        - contraction_mrr_amount - churned_mrr_amount - mrr_amount
    ) > 0.005
