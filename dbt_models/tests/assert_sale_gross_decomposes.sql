-- A sale's gross value is what the producer nets plus every fee plus what partners and affiliates
-- gain: no money of a sale is unaccounted for.
{{ config(severity='warn') }}

select
    sale_id,
    gross_amount,
    net_amount,
    total_fees_amount,
    partners_gain_amount,
    affiliates_gain_amount
from {{ ref('fct_sales') }}
where
    abs(
        gross_amount
        - (net_amount + total_fees_amount + partners_gain_amount + affiliates_gain_amount)
    ) > 0.01
