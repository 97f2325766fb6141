{#- dbt's accepted_values, at severity warn by default: the enums of the spec (vars.platform_enums) are
    the API's documentation, not the API, which adds values (a new payment method) without notice.
    Such a value loads as itself and the marts show it as itself (dbt_models/README.md), so it is
    news for the dashboards, not an error that should stop `dbt build`. A test that wants to fail
    on an unlisted value says `config: {severity: error}` in its properties. -#}
{% test accepted_values(model, column_name, values, quote=True) %}
    {{ config(severity='warn') }}
    {% set macro = adapter.dispatch('test_accepted_values', 'dbt') %}
    {{ macro(model, column_name, values, quote) }}
{% endtest %}
