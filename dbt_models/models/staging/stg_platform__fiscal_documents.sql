{%- set raw = source('platform', 'fiscal_documents') %}
{%- set cols = platform_source_columns(raw) %}

with source as (

    {{ platform_source_select(raw, cols) }}

),

renamed as (

    select
        source.account,
        -- ids
        {{ platform_col(cols, 'document__id', 'string') }} as fiscal_document_id,
        {{ platform_col(cols, 'sale__id', 'string') }} as sale_id,
        {{ platform_col(cols, 'product__id', 'string') }} as product_id,
        {{ platform_col(cols, 'client__id', 'string') }} as client_id,
        -- document
        {{ platform_col(cols, 'document__name', 'string') }} as document_name,
        {{ platform_col(cols, 'document__status', 'string') }} as document_status,
        {{ platform_col(cols, 'document__type', 'string') }} as document_type,
        {{ platform_col(cols, 'document__base_value__value', 'money') }} as base_value_amount,
        {{ platform_col(cols, 'document__base_value__currency', 'string') }} as base_value_currency,
        {{ platform_col(cols, 'document__emission_date', 'timestamp') }} as emitted_at,
        {{ platform_col(cols, 'document__reference_date', 'timestamp') }} as reference_at,
        {{ platform_col(cols, 'document__processing_date', 'timestamp') }} as processed_at,
        {{ platform_col(cols, 'document__taxation__nbs__code', 'string') }} as nbs_code,
        {{ platform_col(cols, 'document__taxation__nbs__description', 'string') }} as nbs_description,
        {{ platform_col(cols, 'document__taxation__tax_classification__code', 'string') }} as tax_classification_code,
        {{ platform_col(cols, 'document__taxation__tax_classification__description', 'string') }} as tax_classification_description,
        {{ platform_col(cols, 'document__taxation__operation_indicator__code', 'string') }} as operation_indicator_code,
        {{ platform_col(cols, 'document__taxation__operation_indicator__description', 'string') }} as operation_indicator_description,
        {{ platform_col(cols, 'generated_by_new_system', 'bool') }} as is_generated_by_new_system,
        -- issuer
        {{ platform_col(cols, 'source__tax_type', 'string') }} as issuer_tax_type,
        {{ platform_col(cols, 'source__company_name', 'string') }} as issuer_company_name,
        {{ platform_col(cols, 'source__document', 'string') }} as issuer_document,
        {{ platform_col(cols, 'source__ie', 'string') }} as issuer_state_registration,
        {{ platform_col(cols, 'source__im', 'string') }} as issuer_municipal_registration,
        {{ platform_col(cols, 'source__email', 'string') }} as issuer_email,
        {{ platform_col(cols, 'source__tel', 'string') }} as issuer_phone,
        {{ platform_col(cols, 'source__tel2', 'string') }} as issuer_phone_2,
        {{ platform_col(cols, 'source__cell', 'string') }} as issuer_cellphone,
        {{ platform_col(cols, 'source__address__street', 'string') }} as issuer_street,
        {{ platform_col(cols, 'source__address__number', 'string') }} as issuer_address_number,
        {{ platform_col(cols, 'source__address__complement', 'string') }} as issuer_address_complement,
        {{ platform_col(cols, 'source__address__district', 'string') }} as issuer_district,
        {{ platform_col(cols, 'source__address__zip_code', 'string') }} as issuer_zip_code,
        {{ platform_col(cols, 'source__address__city', 'string') }} as issuer_city,
        {{ platform_col(cols, 'source__address__uf', 'string') }} as issuer_uf,
        -- recipient
        {{ platform_col(cols, 'destination__company_name', 'string') }} as recipient_company_name,
        {{ platform_col(cols, 'destination__tax_type', 'string') }} as recipient_tax_type,
        {{ platform_col(cols, 'destination__tax_id', 'string') }} as recipient_tax_id,
        {{ platform_col(cols, 'destination__ie', 'string') }} as recipient_state_registration,
        {{ platform_col(cols, 'destination__im', 'string') }} as recipient_municipal_registration,
        {{ platform_col(cols, 'destination__email', 'string') }} as recipient_email,
        {{ platform_col(cols, 'destination__tel', 'string') }} as recipient_phone,
        {{ platform_col(cols, 'destination__tel2', 'string') }} as recipient_phone_2,
        {{ platform_col(cols, 'destination__cell', 'string') }} as recipient_cellphone,
        {{ platform_col(cols, 'destination__address__zip_code', 'string') }} as recipient_zip_code,
        {{ platform_col(cols, 'destination__address__street', 'string') }} as recipient_street,
        {{ platform_col(cols, 'destination__address__number', 'string') }} as recipient_address_number,
        {{ platform_col(cols, 'destination__address__complement', 'string') }} as recipient_address_complement,
        {{ platform_col(cols, 'destination__address__district', 'string') }} as recipient_district,
        {{ platform_col(cols, 'destination__address__country_foreign', 'string') }} as recipient_country_foreign,
        {{ platform_col(cols, 'destination__address__city', 'string') }} as recipient_city,
        {{ platform_col(cols, 'destination__address__uf', 'string') }} as recipient_uf,
        {{ platform_col(cols, 'destination__address__country', 'string') }} as recipient_country,
        -- sale
        {{ platform_col(cols, 'sale__payment_date', 'timestamp') }} as sale_paid_at,
        {{ platform_col(cols, 'sale__total__value', 'money') }} as sale_total_amount,
        {{ platform_col(cols, 'sale__total__currency', 'string') }} as sale_total_currency,
        -- client
        {{ platform_col(cols, 'client__name', 'string') }} as client_name,
        {{ platform_col(cols, 'client__document', 'string') }} as client_document,
        {{ platform_col(cols, 'client__email', 'string') }} as client_email,
        {{ platform_col(cols, 'client__cellphone', 'string') }} as client_cellphone,
        {{ platform_col(cols, 'client__telephone', 'string') }} as client_phone,
        {{ platform_col(cols, 'client__telephone2', 'string') }} as client_phone_2,
        {{ platform_col(cols, 'client__address__zip_code', 'string') }} as client_zip_code,
        {{ platform_col(cols, 'client__address__street', 'string') }} as client_street,
        {{ platform_col(cols, 'client__address__number', 'string') }} as client_address_number,
        {{ platform_col(cols, 'client__address__complement', 'string') }} as client_address_complement,
        {{ platform_col(cols, 'client__address__neighborhood', 'string') }} as client_neighborhood,
        {{ platform_col(cols, 'client__address__city', 'string') }} as client_city,
        {{ platform_col(cols, 'client__address__state', 'string') }} as client_state,
        {{ platform_col(cols, 'product__title', 'string') }} as product_title

    from source

)

select * from renamed
