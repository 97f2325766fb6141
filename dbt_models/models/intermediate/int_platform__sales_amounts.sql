{#- The money rules of a sale, in one place: was it paid, what was refunded, what the producer keeps.
    fct_sales, fct_sale_items and int_platform__sale_affiliates all read them from here. -#}
with sales as (

    select * from {{ ref('stg_platform__sales') }}

),

flagged as (

    select
        *,
        -- coalesce: a status the API left null (or one it does not list) is neither paid nor
        -- refunded by itself; the payment time and the refund still count
        coalesce(
            paid_at is not null
            or sale_status in ('paid', 'waitingRefund', 'refunded'),
            false
        ) as was_paid,
        coalesce(
            sale_status = 'refunded'
            or (refund_type is not null and refunded_at is not null),
            false
        ) as is_refunded
    from sales

),

amounts as (

    select
        *,
        -- Cast back to the money type: on PostgreSQL a literal 0 (a coalesce, a branch) has scale 0,
        -- so without it the same column would hold both 0 and 80.000000.
        cast(
            case
                when not is_refunded then 0
                when refund_type = 'partial' then coalesce(refund_partial_amount, 0)
                else coalesce(refund_amount, 0)
            end as {{ type_money() }}
        ) as refunded_amount,
        cast(
            coalesce(fee_amount, 0)
            + coalesce(company_x_fee_amount, 0)
            + coalesce(installment_settlement_fee_amount, 0)
            + coalesce(other_fees_amount, 0) as {{ type_money() }}
        ) as total_fees_amount
    from flagged

),

final as (

    select
        *,
        cast(
            case
                when not was_paid then 0
                when refunded_amount >= net_amount then 0
                else net_amount - refunded_amount
            end as {{ type_money() }}
        ) as net_revenue_amount
    from amounts

)

select * from final
