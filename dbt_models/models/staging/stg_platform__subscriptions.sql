{%- set raw = source('platform', 'subscriptions') %}
{%- set cols = platform_source_columns(raw) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- ids
        {{ platform_col(cols, 'id', 'string') }} as subscription_id,
        {{ platform_col(cols, 'first_invoice_id', 'string') }} as first_invoice_id,
        -- status
        {{ platform_col(cols, 'status', 'string') }} as subscription_status,
        {{ platform_col(cols, 'is_finite', 'bool') }} as is_finite,
        {{ platform_col(cols, 'is_unlimited_installments', 'bool') }} as is_unlimited_installments,
        {{ platform_col(cols, 'has_negotiation', 'bool') }} as has_negotiation,
        -- interruption
        {{ platform_col(cols, 'interruption__type', 'string') }} as interruption_type,
        {{ platform_col(cols, 'interruption__created_at', 'timestamp') }} as interrupted_at,
        {{ platform_col(cols, 'interruption__remove_access_date', 'timestamp') }} as remove_access_at,
        {{ platform_col(cols, 'interruption__reason', 'string') }} as interruption_reason,
        {{ platform_col(cols, 'interruption__origin', 'string') }} as interruption_origin,
        {{ platform_col(cols, 'interruption__responsible', 'string') }} as interruption_responsible,
        {{ platform_col(cols, 'interruption__previous_status', 'string') }} as interruption_previous_status,
        -- recurrence
        {{ platform_col(cols, 'recurrence__starts_at', 'timestamp') }} as starts_at,
        {{ platform_col(cols, 'recurrence__next_due_date', 'timestamp') }} as next_due_at,
        {{ platform_col(cols, 'recurrence__current_due_date', 'timestamp') }} as current_due_at,
        {{ platform_col(cols, 'recurrence__final_due_date', 'timestamp') }} as final_due_at,
        {{ platform_col(cols, 'recurrence__finishes_at', 'timestamp') }} as finishes_at,
        {{ platform_col(cols, 'recurrence__frequency__type', 'string') }} as frequency_type,
        {{ platform_col(cols, 'recurrence__frequency__value', 'int') }} as frequency_value,
        -- charges
        {{ platform_col(cols, 'charges__total', 'int') }} as count_charges_total,
        {{ platform_col(cols, 'charges__current', 'int') }} as count_charges_current,
        {{ platform_col(cols, 'charges__paid', 'int') }} as count_charges_paid,
        {{ platform_col(cols, 'charges__pending', 'int') }} as count_charges_pending,
        {{ platform_col(cols, 'charges__negotiated', 'int') }} as count_charges_negotiated,
        -- payment
        {{ platform_col(cols, 'payment__price__value', 'money') }} as price_amount,
        {{ platform_col(cols, 'payment__price__currency', 'string') }} as price_currency,
        {{ platform_col(cols, 'payment__method', 'string') }} as payment_method,
        {{ platform_col(cols, 'payment__installments', 'int') }} as installments,
        -- subscriber
        {{ platform_col(cols, 'client__name', 'string') }} as subscriber_name,
        {{ platform_col(cols, 'client__email', 'string') }} as subscriber_email,
        {{ platform_col(cols, 'client__phone__country_code', 'string') }} as subscriber_phone_country_code,
        {{ platform_col(cols, 'client__phone__area_code', 'string') }} as subscriber_phone_area_code,
        {{ platform_col(cols, 'client__phone__number', 'string') }} as subscriber_phone_number,
        -- timestamps
        {{ platform_col(cols, 'created_at', 'timestamp') }} as created_at,
        {{ platform_col(cols, 'updated_at', 'timestamp') }} as updated_at

    from source

)

select * from renamed
