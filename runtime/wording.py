"""The texts the runtime itself writes into a verdict's reasons, in the locales the service's
pages speak: a missing photo or input (`runtime.missing`), the default `otherwise`, a verdict
stopped by the step limit and a verdict rule that could not be evaluated.

The runtime knows no catalog (the server's Babel catalogs live above it, `server/web/locale`),
so its few sentences are a table here. A locale not in the table reads its language's texts
(`es_MX` reads `es_AR`'s), else English. `{label}`, `{line}` and `{code}` are filled in.

Also what the machine saw when its result is not sure enough to stand alone (`machine_saw`): a
review reason's `machineSaw` and the audit trail's line for a machine's result say it in the
reader's language ("body color between white and grey"; "plate: read AB123CD at 62%").
"""

from __future__ import annotations

from typing import Any

#: The body colors an analyzer names (`runtime.vision.color.COLORS`), each a `color_...` text.
_COLORS = ("yellow", "blue", "white", "gold", "grey", "orange", "black", "red", "green")

#: Locale -> key -> text.
TEXTS: dict[str, dict[str, str]] = {
    "en_US": {
        "photo": "Required photo not uploaded: {label}",
        "input": "Required input not filled: {label}",
        "otherwise": "The approval condition was not met",
        "step_limit": "The verdict could not be computed (step limit)",
        "rule_error": "A rule of the verdict (line {line}) could not be evaluated: {code}",
        "no_machine_route": "{label}: {validation} is not decided by a machine here",
        "no_result": "{label}: {validation} had no result at the finish",
        "low_confidence": "{label}: {validation} confidence {confidence} is below {reviewBelow}",
        "review_rule_error": "A review rule (line {line}) could not be evaluated: {code}",
        "retake": "Photos retaken at {by}'s request: {retakeMessage}",
        "location_declined": "{label}: the consumer chose not to share their location, so "
        "{validation} was not checked",
        "saw_read": "{validation}: read {result} at {confidence}%",
        "saw_nothing": "{validation}: nothing read ({confidence}%)",
        "saw_color": "body color between {first} and {second}",
        "saw_colorless": "body color between {first} and {second}, a paint without hue: light "
        "and shade decide which",
        "saw_face": "faces at distance {distance} (the same person up to {limit})",
        **{f"color_{color}": color for color in _COLORS},
    },
    "es_AR": {
        "photo": "Falta la foto obligatoria: {label}",
        "input": "Falta completar el dato obligatorio: {label}",
        "otherwise": "No se cumplió la condición de aprobación",
        "step_limit": "No se pudo calcular el veredicto (límite de pasos)",
        "rule_error": "Una regla del veredicto (línea {line}) no se pudo evaluar: {code}",
        "no_machine_route": "{label}: ninguna máquina decide {validation} aquí",
        "no_result": "{label}: {validation} no tenía resultado al finalizar",
        "low_confidence": "{label}: la confianza de {validation}, {confidence}, es menor que "
        "{reviewBelow}",
        "review_rule_error": "Una regla de revisión (línea {line}) no se pudo evaluar: {code}",
        "retake": "Fotos repetidas a pedido de {by}: {retakeMessage}",
        "location_declined": "{label}: quien hizo la inspección eligió no compartir su "
        "ubicación, así que {validation} no se verificó",
        "saw_read": "{validation}: se leyó {result} con {confidence}%",
        "saw_nothing": "{validation}: no se leyó nada ({confidence}%)",
        "saw_color": "color de carrocería entre {first} y {second}",
        "saw_colorless": "color de carrocería entre {first} y {second}, un color sin matiz: la "
        "luz y la sombra deciden cuál",
        "saw_face": "rostros a distancia {distance} (la misma persona hasta {limit})",
        "color_yellow": "amarillo",
        "color_blue": "azul",
        "color_white": "blanco",
        "color_gold": "dorado",
        "color_grey": "gris",
        "color_orange": "naranja",
        "color_black": "negro",
        "color_red": "rojo",
        "color_green": "verde",
    },
    "pt_BR": {
        "photo": "Foto obrigatória não enviada: {label}",
        "input": "Campo obrigatório não preenchido: {label}",
        "otherwise": "A condição de aprovação não foi atendida",
        "step_limit": "Não foi possível calcular o veredito (limite de passos)",
        "rule_error": "Uma regra do veredito (linha {line}) não pôde ser avaliada: {code}",
        "no_machine_route": "{label}: nenhuma máquina decide {validation} aqui",
        "no_result": "{label}: {validation} não tinha resultado ao finalizar",
        "low_confidence": "{label}: a confiança de {validation}, {confidence}, é menor que "
        "{reviewBelow}",
        "review_rule_error": "Uma regra de revisão (linha {line}) não pôde ser avaliada: {code}",
        "retake": "Fotos refeitas a pedido de {by}: {retakeMessage}",
        "location_declined": "{label}: quem fez a inspeção escolheu não compartilhar a "
        "localização, então {validation} não foi verificado",
        "saw_read": "{validation}: leu {result} com {confidence}%",
        "saw_nothing": "{validation}: nada lido ({confidence}%)",
        "saw_color": "cor da carroceria entre {first} e {second}",
        "saw_colorless": "cor da carroceria entre {first} e {second}, uma cor sem matiz: a luz e "
        "a sombra decidem qual",
        "saw_face": "rostos a distância {distance} (a mesma pessoa até {limit})",
        "color_yellow": "amarelo",
        "color_blue": "azul",
        "color_white": "branco",
        "color_gold": "dourado",
        "color_grey": "cinza",
        "color_orange": "laranja",
        "color_black": "preto",
        "color_red": "vermelho",
        "color_green": "verde",
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


#: What a review reason's text is made of, per reason code (`runtime.routing`): the reason keeps
#: these fields beside its `message`, so a page re-words it in its reader's language.
REVIEW_REASON_FIELDS: dict[str, tuple[str, ...]] = {
    "no_machine_route": ("label", "validation"),
    "no_result": ("label", "validation"),
    "location_declined": ("label", "validation"),
    "low_confidence": ("label", "validation", "confidence", "reviewBelow"),
    "rule_error": ("line", "error"),
    "retake": ("by", "retakeMessage"),
}


def review_reason_text(reason: dict[str, Any], locale: str | None) -> str:
    """A `review.reasons` item as a reader of `locale` reads it: re-worded from its fields when
    it has them (a `rule` reason is the template's own text, translated by the template; an
    item recorded before these fields existed keeps its stored message)."""
    code = str(reason.get("code", ""))
    names = REVIEW_REASON_FIELDS.get(code)
    if names is None or any(name not in reason for name in names):
        return str(reason.get("message", ""))
    values = {name: reason[name] for name in names}
    for name in ("confidence", "reviewBelow"):
        if isinstance(values.get(name), float):
            values[name] = f"{values[name]:g}"
    if code == "rule_error":
        key = "review_rule_error" if reason.get("source") == "review" else "rule_error"
        return say(key, locale, line=values["line"], code=values["error"])
    return say(code, locale, **values)


#: What an analyzer may report it saw beyond its result (`ValidationOutcome.seen`), by `kind`:
#: `color` the two colors the body reads between (most likely first) and whether both are
#: colorless (white, grey, black: light decides among them); `face` the distance between the
#: two faces and the shipped limit for the same person.
SEEN_KINDS: dict[str, tuple[str, ...]] = {
    "color": ("colors", "colorless"),
    "face": ("distance", "limit"),
}


def seen_problem(seen: Any) -> str | None:
    """Why `seen` is not one of `SEEN_KINDS`'s shapes (None when it is)."""
    if not isinstance(seen, dict) or seen.get("kind") not in SEEN_KINDS:
        return "seen is an object whose kind is one of " + ", ".join(SEEN_KINDS)
    kind = seen["kind"]
    if set(seen) != {"kind", *SEEN_KINDS[kind]}:
        return f"a {kind} seen holds kind, " + ", ".join(SEEN_KINDS[kind])
    if kind == "color":
        colors = seen["colors"]
        if (
            not isinstance(colors, list)
            or len(colors) != 2
            or any(color not in _COLORS for color in colors)
            or not isinstance(seen["colorless"], bool)
        ):
            return "a color seen holds two colors of " + ", ".join(_COLORS) + " and colorless"
    elif any(
        isinstance(seen[name], bool) or not isinstance(seen[name], int | float)
        for name in SEEN_KINDS[kind]
    ):
        return "a face seen holds two numbers"
    return None


def machine_saw(fields: dict[str, Any], locale: str | None) -> str | None:
    """What the machine saw for one result, in `locale`: from `fields` `validation`,
    `confidence`, `result` and, when the analyzer said more, `seen` (`SEEN_KINDS`). None
    without a confidence (a person's result, or none yet)."""
    confidence = fields.get("confidence")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        return None
    seen = fields.get("seen")
    if seen is not None and seen_problem(seen) is None:
        if seen["kind"] == "color":
            table = texts(locale)
            first, second = (table.get(f"color_{c}", c) for c in seen["colors"])
            key = "saw_colorless" if seen["colorless"] else "saw_color"
            return say(key, locale, first=first, second=second)
        return say("saw_face", locale, distance=f"{seen['distance']:g}", limit=f"{seen['limit']:g}")
    values = {"validation": fields.get("validation", ""), "confidence": f"{confidence:.0f}"}
    result = fields.get("result")
    if result is None or result == "":
        return say("saw_nothing", locale, **values)
    return say("saw_read", locale, result=result, **values)
