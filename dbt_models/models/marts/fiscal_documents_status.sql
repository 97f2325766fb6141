{#- Month (of the document's reference date, else its emission) x status x currency. -#}
with documents as (

    select
        *,
        cast({{ dbt.date_trunc('month', 'coalesce(reference_at, emitted_at)') }} as date) as month_start
    from {{ ref('stg_platform__fiscal_documents') }}

),

final as (

    select
        account,
        {{ surrogate_key(['month_start', 'document_status', 'base_value_currency']) }} as month_status_key,
        month_start,
        document_status,
        base_value_currency as currency,
        count(*) as count_documents,
        count(distinct sale_id) as count_sales,
        sum(base_value_amount) as base_value_amount,
        sum(sale_total_amount) as sale_total_amount
    from documents
    group by account, month_start, document_status, base_value_currency

)

select * from final
