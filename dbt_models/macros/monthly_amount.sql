{#- A subscription price per billing period as a price per month (months of 365.25 / 12 days). -#}
{% macro monthly_amount(price, frequency_type, period_length) -%}
    cast(
        case {{ frequency_type }}
            when 'monthly' then {{ price }} / {{ period_length }}
            when 'yearly' then {{ price }} / (12 * {{ period_length }})
            when 'weekly' then {{ price }} * (365.25 / 12) / (7 * {{ period_length }})
            when 'daily' then {{ price }} * (365.25 / 12) / {{ period_length }}
        end
        as {{ type_money() }}
    )
{%- endmacro %}
