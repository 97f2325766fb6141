with subscriptions as (

    select * from {{ ref('int_platform__subscriptions_normalised') }}

),

final as (

    select
        -- ids
        account,
        subscription_id,
        first_invoice_id,
        product_id,
        product_title,

        -- status
        subscription_status,
        is_active,
        is_paying,
        is_finite,
        has_negotiation,

        -- price
        price_currency as currency,
        price_amount,
        frequency_type,
        frequency_value,
        monthly_amount,
        payment_method,
        installments,

        -- subscriber
        subscriber_name,
        subscriber_email,

        -- recurrence
        started_at,
        current_due_at,
        next_due_at,
        final_due_at,
        finishes_at,
        ended_at,

        -- cancellation or suspension
        interruption_type,
        interrupted_at,
        interruption_reason,
        interruption_origin,
        interruption_responsible,
        interruption_previous_status,
        remove_access_at,

        -- charges
        count_charges_total,
        count_charges_paid,
        count_charges_pending,
        count_charges_negotiated,

        -- timestamps
        created_at,
        updated_at

    from subscriptions

)

select * from final
