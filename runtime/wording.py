"""The texts the runtime itself writes into a verdict's reasons, in the locales the service's
pages speak: a missing photo or input (`runtime.missing`), the default `otherwise`, a verdict
stopped by the step limit and a verdict rule that could not be evaluated.

The runtime knows no catalog (the server's Babel catalogs live above it, `server/web/locale`),
so its few sentences are a table here. A locale not in the table reads its language's texts
(`es_MX` reads `es_AR`'s), else English. `{label}`, `{line}` and `{code}` are filled in.
"""

from __future__ import annotations

from typing import Any

#: Locale -> key -> text.
TEXTS: dict[str, dict[str, str]] = {
    "en_US": {
        "photo": "Required photo not uploaded: {label}",
        "input": "Required input not filled: {label}",
        "otherwise": "The approval condition was not met",
        "step_limit": "The verdict could not be computed (step limit)",
        "rule_error": "A rule of the verdict (line {line}) could not be evaluated: {code}",
    },
    "es_AR": {
        "photo": "Falta la foto obligatoria: {label}",
        "input": "Falta completar el dato obligatorio: {label}",
        "otherwise": "No se cumplió la condición de aprobación",
        "step_limit": "No se pudo calcular el veredicto (límite de pasos)",
        "rule_error": "Una regla del veredicto (línea {line}) no se pudo evaluar: {code}",
    },
    "pt_BR": {
        "photo": "Foto obrigatória não enviada: {label}",
        "input": "Campo obrigatório não preenchido: {label}",
        "otherwise": "A condição de aprovação não foi atendida",
        "step_limit": "Não foi possível calcular o veredito (limite de passos)",
        "rule_error": "Uma regra do veredito (linha {line}) não pôde ser avaliada: {code}",
    },
}
#: The locales the table writes (the first is the fallback).
LOCALES = tuple(TEXTS)


def texts(locale: str | None) -> dict[str, str]:
    """The table of `locale`, else of another country's same language, else English."""
    found = TEXTS.get(locale or "")
    if found is None and locale:
        language = locale.partition("_")[0] + "_"
        found = next((table for key, table in TEXTS.items() if key.startswith(language)), None)
    return found or TEXTS[LOCALES[0]]


def say(key: str, locale: str | None, **values: Any) -> str:
    """Text `key` in `locale`, its `{...}` filled from `values`."""
    return texts(locale)[key].format(**values)
