-- Every amount of a sale is in the sale's currency, so the marts may add them up under `currency`.
{{ config(severity='warn') }}

{%- set amounts = ['gross', 'net', 'partners_gain', 'affiliates_gain', 'fee', 'total', 'total_with_interest',
                   'company_x_fee', 'installment_settlement_fee', 'other_fees', 'refund', 'refund_partial'] %}
select
    sale_id,
    currency
from {{ ref('stg_platform__sales') }}
where
    false
    {% for amount in amounts -%}
        or ({{ amount }}_currency is not null and {{ amount }}_currency != currency)
    {% endfor -%}
