{%- set raw = source('platform', 'sales') %}
{%- set cols = platform_source_columns(raw) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- ids
        {{ platform_col(cols, 'id', 'string') }} as sale_id,
        {{ platform_col(cols, 'contract_id', 'string') }} as contract_id,
        {{ platform_col(cols, 'product__id', 'string') }} as product_id,
        {{ platform_col(cols, 'buyer__id', 'string') }} as buyer_id,
        {{ platform_col(cols, 'affiliate__id', 'string') }} as affiliate_id,
        {{ platform_col(cols, 'producer__id', 'string') }} as producer_id,
        {{ platform_col(cols, 'recipient__id', 'string') }} as recipient_id,
        -- status
        {{ platform_col(cols, 'status', 'string') }} as sale_status,
        {{ platform_col(cols, 'recovering_status', 'string') }} as recovering_status,
        {{ platform_col(cols, 'is_infinite_funnel', 'bool') }} as is_infinite_funnel,
        -- amounts
        {{ platform_col(cols, 'gross_gain__value', 'money') }} as gross_amount,
        {{ platform_col(cols, 'gross_gain__currency', 'string') }} as gross_currency,
        {{ platform_col(cols, 'net_gain__value', 'money') }} as net_amount,
        {{ platform_col(cols, 'net_gain__currency', 'string') }} as net_currency,
        {{ platform_col(cols, 'partners_gain__value', 'money') }} as partners_gain_amount,
        {{ platform_col(cols, 'partners_gain__currency', 'string') }} as partners_gain_currency,
        {{ platform_col(cols, 'affiliates_gain__value', 'money') }} as affiliates_gain_amount,
        {{ platform_col(cols, 'affiliates_gain__currency', 'string') }} as affiliates_gain_currency,
        {{ platform_col(cols, 'fee__value', 'money') }} as fee_amount,
        {{ platform_col(cols, 'fee__currency', 'string') }} as fee_currency,
        {{ platform_col(cols, 'total__value', 'money') }} as total_amount,
        {{ platform_col(cols, 'total__currency', 'string') }} as total_currency,
        {{ platform_col(cols, 'total_interest__value', 'money') }} as total_with_interest_amount,
        {{ platform_col(cols, 'total_interest__currency', 'string') }} as total_with_interest_currency,
        {{ platform_col(cols, 'company_x_fee__value', 'money') }} as company_x_fee_amount,
        {{ platform_col(cols, 'company_x_fee__currency', 'string') }} as company_x_fee_currency,
        {{ platform_col(cols, 'installment_settlement_fee__value', 'money') }} as installment_settlement_fee_amount,
        {{ platform_col(cols, 'installment_settlement_fee__currency', 'string') }} as installment_settlement_fee_currency,
        {{ platform_col(cols, 'others__value', 'money') }} as other_fees_amount,
        {{ platform_col(cols, 'others__currency', 'string') }} as other_fees_currency,
        {{ platform_col(cols, 'currency', 'string') }} as currency,
        {{ platform_col(cols, 'installments', 'int') }} as installments,
        {{ platform_col(cols, 'locale', 'string') }} as checkout_locale,
        -- payment
        {{ platform_col(cols, 'payment__method', 'string') }} as payment_method,
        {{ platform_col(cols, 'payment__detail', 'string') }} as payment_detail,
        {{ platform_col(cols, 'payment__link', 'string') }} as payment_link,
        -- product
        {{ platform_col(cols, 'product__name', 'string') }} as product_name,
        {{ platform_col(cols, 'product__type', 'string') }} as product_type,
        {{ platform_col(cols, 'product__billing_type', 'string') }} as product_billing_type,
        {{ platform_col(cols, 'product__sku', 'string') }} as product_sku,
        {{ platform_col(cols, 'offer__name', 'string') }} as offer_name,
        -- refund
        {{ platform_col(cols, 'refund__type', 'string') }} as refund_type,
        {{ platform_col(cols, 'refund__value__value', 'money') }} as refund_amount,
        {{ platform_col(cols, 'refund__value__currency', 'string') }} as refund_currency,
        {{ platform_col(cols, 'refund__partial_value__value', 'money') }} as refund_partial_amount,
        {{ platform_col(cols, 'refund__partial_value__currency', 'string') }} as refund_partial_currency,
        {{ platform_col(cols, 'refund__refunded_at', 'timestamp') }} as refunded_at,
        {{ platform_col(cols, 'refund__requested_at', 'timestamp') }} as refund_requested_at,
        {{ platform_col(cols, 'refund__motive', 'string') }} as refund_motive,
        {{ platform_col(cols, 'refund__requester_name', 'string') }} as refund_requester_name,
        -- people
        {{ platform_col(cols, 'affiliate__name', 'string') }} as affiliate_name,
        {{ platform_col(cols, 'producer__name', 'string') }} as producer_name,
        {{ platform_col(cols, 'recipient__name', 'string') }} as recipient_name,
        {{ platform_col(cols, 'recipient__email', 'string') }} as recipient_email,
        {{ platform_col(cols, 'recipient__document', 'string') }} as recipient_document,
        {{ platform_col(cols, 'recipient__phone', 'string') }} as recipient_phone,
        {{ platform_col(cols, 'buyer__name', 'string') }} as buyer_name,
        {{ platform_col(cols, 'buyer__email', 'string') }} as buyer_email,
        {{ platform_col(cols, 'buyer__document', 'string') }} as buyer_document,
        {{ platform_col(cols, 'buyer__phone', 'string') }} as buyer_phone,
        {{ platform_col(cols, 'buyer__phone2', 'string') }} as buyer_phone_2,
        {{ platform_col(cols, 'buyer__phone3', 'string') }} as buyer_phone_3,
        {{ platform_col(cols, 'buyer__address__zip_code', 'string') }} as buyer_zip_code,
        {{ platform_col(cols, 'buyer__address__street', 'string') }} as buyer_street,
        {{ platform_col(cols, 'buyer__address__number', 'string') }} as buyer_address_number,
        {{ platform_col(cols, 'buyer__address__complement', 'string') }} as buyer_address_complement,
        {{ platform_col(cols, 'buyer__address__neighborhood', 'string') }} as buyer_neighborhood,
        {{ platform_col(cols, 'buyer__address__city', 'string') }} as buyer_city,
        {{ platform_col(cols, 'buyer__address__state', 'string') }} as buyer_state,
        -- marketing
        {{ platform_col(cols, 'tracker', 'string') }} as tracker,
        {{ platform_col(cols, 'tracker2', 'string') }} as tracker_2,
        {{ platform_col(cols, 'tracker3', 'string') }} as tracker_3,
        {{ platform_col(cols, 'utm__source', 'string') }} as utm_source,
        {{ platform_col(cols, 'utm__medium', 'string') }} as utm_medium,
        {{ platform_col(cols, 'utm__campaign', 'string') }} as utm_campaign,
        {{ platform_col(cols, 'utm__content', 'string') }} as utm_content,
        {{ platform_col(cols, 'utm__term', 'string') }} as utm_term,
        {{ platform_col(cols, 'order_bump__has', 'bool') }} as has_order_bump,
        {{ platform_col(cols, 'order_bump__is_main_sale', 'bool') }} as is_order_bump_main_sale,
        {{ platform_col(cols, 'order_bump__main_sale_id', 'string') }} as order_bump_main_sale_id,
        -- timestamps
        {{ platform_col(cols, 'created_at', 'timestamp') }} as created_at,
        {{ platform_col(cols, 'updated_at', 'timestamp') }} as updated_at,
        {{ platform_col(cols, 'due_date', 'timestamp') }} as due_at,
        {{ platform_col(cols, 'paid_at', 'timestamp') }} as paid_at,
        {{ platform_col(cols, 'credit_date', 'timestamp') }} as credited_at

    from source

)

select * from renamed
