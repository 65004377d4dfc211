"""toolkit_weather_my: current weather and a short forecast from Open-Meteo (no API key)."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Annotated, Any

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool

# Both endpoints can be pointed at a mirror, a self-hosted Open-Meteo or a test server with
# tools.open_meteo_url (forecast) and tools.geocoding_url (place search) in the config.
FORECAST_URL = "https://api.open-meteo.com/v1/forecast"
GEOCODING_URL = "https://geocoding-api.open-meteo.com/v1/search"
TIMEOUT = 15.0
MAX_DAYS = 16  # what Open-Meteo forecasts
CURRENT_FIELDS = (
    "temperature_2m,apparent_temperature,relative_humidity_2m,precipitation,weather_code,"
    "wind_speed_10m"
)
DAILY_FIELDS = (
    "weather_code,temperature_2m_max,temperature_2m_min,precipitation_sum,"
    "precipitation_probability_max"
)
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_REGION_KEYS = ("country", "country_code", "admin1", "admin2", "admin3")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")

# WMO weather interpretation codes, as Open-Meteo documents them.
WEATHER_CODES = {
    0: "clear sky",
    1: "mainly clear",
    2: "partly cloudy",
    3: "overcast",
    45: "fog",
    48: "depositing rime fog",
    51: "light drizzle",
    53: "moderate drizzle",
    55: "dense drizzle",
    56: "light freezing drizzle",
    57: "dense freezing drizzle",
    61: "slight rain",
    63: "moderate rain",
    65: "heavy rain",
    66: "light freezing rain",
    67: "heavy freezing rain",
    71: "slight snowfall",
    73: "moderate snowfall",
    75: "heavy snowfall",
    77: "snow grains",
    80: "slight rain showers",
    81: "moderate rain showers",
    82: "violent rain showers",
    85: "slight snow showers",
    86: "heavy snow showers",
    95: "thunderstorm",
    96: "thunderstorm with slight hail",
    99: "thunderstorm with heavy hail",
}


@dataclass(frozen=True)
class Place:
    label: str
    latitude: float
    longitude: float


@tool(
    "toolkit_weather_my",
    requires=("httpx",),
    concurrency_safe=True,
    keywords="weather forecast rain snow temperature",
)
def toolkit_weather_my(
    ctx: ToolContext,
    location: str | None = None,
    latitude: float | None = None,
    longitude: float | None = None,
    days: Annotated[int, f"days of forecast including today, 1-{MAX_DAYS} (default 3)"] = 3,
) -> str:
    """Current weather and a daily forecast for a place, from Open-Meteo (free, no key). Give
    either a place name (location) or latitude and longitude. Reports the temperature,
    feels-like temperature, humidity, wind and conditions now, then for each day the
    conditions, minimum and maximum temperature and precipitation (amount and chance), in
    metric units and the place's local time.

    Args:
        location: place name, optionally narrowed with a region or country after a comma:
            'Berlin', 'Springfield, Illinois', 'Paris, FR', '杭州'
        latitude: latitude in degrees (-90..90)
        longitude: longitude in degrees (-180..180)
    """
    if not 1 <= days <= MAX_DAYS:
        raise ToolError(f"days must be between 1 and {MAX_DAYS}, got {days}")
    import httpx

    forecast_url = ctx.tools_config.open_meteo_url or FORECAST_URL
    geocoding_url = ctx.tools_config.geocoding_url or GEOCODING_URL
    with httpx.Client(timeout=TIMEOUT, headers={"User-Agent": "tea_agent_mini"}) as client:
        if latitude is not None or longitude is not None:
            place = _coordinates(location, latitude, longitude)
        elif location and location.strip():
            place = geocode(client, geocoding_url, location)
        else:
            raise ToolError("give a location (place name) or both latitude and longitude")
        params = {
            "latitude": place.latitude,
            "longitude": place.longitude,
            "current": CURRENT_FIELDS,
            "daily": DAILY_FIELDS,
            "timezone": "auto",
            "forecast_days": days,
        }
        payload = _get_json(client, forecast_url, params)
    return format_report(place, payload)


def geocode(client: Any, url: str, location: str) -> Place:
    """The best match for ``"name[, region or country ...]"``. Raises ToolError."""
    name, *qualifiers = [part.strip() for part in location.split(",") if part.strip()]
    language = "zh" if _CJK.search(name) else "en"
    params = {"name": name, "count": 10, "language": language, "format": "json"}
    results = _get_json(client, url, params).get("results") or []
    if not results:
        raise ToolError(
            f"no place called {name!r} was found; check the spelling, try the nearest city, "
            "or give latitude and longitude"
        )
    wanted = [q.lower() for q in qualifiers]
    for result in results:
        fields = [str(result.get(key) or "").lower() for key in _REGION_KEYS]
        if all(any(q == f or (len(q) > 2 and q in f) for f in fields) for q in wanted):
            return Place(_label(result), float(result["latitude"]), float(result["longitude"]))
    found = "; ".join(_label(result) for result in results[:5])
    raise ToolError(f"no {name!r} in {', '.join(qualifiers)} was found. Places found: {found}")


def _label(result: dict[str, Any]) -> str:
    parts = [result.get("name"), result.get("admin1"), result.get("country")]
    unique: list[str] = []
    for part in parts:
        if part and part not in unique:
            unique.append(str(part))
    return ", ".join(unique)


def _coordinates(location: str | None, latitude: float | None, longitude: float | None) -> Place:
    if latitude is None or longitude is None:
        raise ToolError("give both latitude and longitude (or a location name instead)")
    if not (-90 <= latitude <= 90 and -180 <= longitude <= 180):
        raise ToolError(f"coordinates out of range: latitude {latitude}, longitude {longitude}")
    label = (location or "").strip() or f"{latitude:.4f}, {longitude:.4f}"
    return Place(label, float(latitude), float(longitude))


def _get_json(client: Any, url: str, params: dict[str, Any]) -> dict[str, Any]:
    import httpx

    try:
        response = client.get(url, params=params)
    except httpx.HTTPError as exc:
        raise ToolError(f"could not reach the weather service at {url}: {exc}") from exc
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if response.status_code != 200:
        reason = payload.get("reason") if isinstance(payload, dict) else response.text[:200]
        raise ToolError(f"the weather service answered HTTP {response.status_code}: {reason}")
    if not isinstance(payload, dict):
        raise ToolError(f"the weather service at {url} did not answer with a JSON object")
    return payload


# ---- the report ------------------------------------------------------------------------------


def describe_code(code: Any) -> str:
    if code is None:
        return "conditions unknown"
    return WEATHER_CODES.get(int(code), f"weather code {code}")


def format_report(place: Place, payload: dict[str, Any]) -> str:
    lat, lon = payload.get("latitude", place.latitude), payload.get("longitude", place.longitude)
    lines = [
        f"Weather for {place.label} ({_degrees(lat, 'N', 'S')}, {_degrees(lon, 'E', 'W')}), "
        f"timezone {payload.get('timezone', 'GMT')}"
    ]
    current = payload.get("current")
    if isinstance(current, dict):
        lines.append(_current_line(current, payload.get("current_units") or {}))
    daily = payload.get("daily")
    if isinstance(daily, dict) and daily.get("time"):
        lines.append("Forecast:")
        units = payload.get("daily_units") or {}
        for index, day in enumerate(daily["time"]):
            lines.append("  " + _daily_line(day, index, daily, units))
    lines.append("Source: Open-Meteo.com (weather data CC BY 4.0)")
    return "\n".join(lines)


def _current_line(current: dict[str, Any], units: dict[str, Any]) -> str:
    def value(key: str, fallback_unit: str) -> str:
        return _with_unit(current.get(key), units.get(key, fallback_unit))

    when = str(current.get("time", "")).replace("T", " ")
    return (
        f"Now ({when}): {value('temperature_2m', '°C')}, feels like "
        f"{value('apparent_temperature', '°C')}, {describe_code(current.get('weather_code'))}; "
        f"humidity {value('relative_humidity_2m', '%')}, wind {value('wind_speed_10m', 'km/h')}, "
        f"precipitation {value('precipitation', 'mm')}"
    )


def _daily_line(day: str, index: int, daily: dict[str, Any], units: dict[str, Any]) -> str:
    def pick(key: str) -> Any:
        values = daily.get(key) or []
        return values[index] if index < len(values) else None

    try:
        weekday = WEEKDAYS[dt.date.fromisoformat(day).weekday()] + " "
    except ValueError:
        weekday = ""
    low = _with_unit(pick("temperature_2m_min"), "")
    high = _with_unit(pick("temperature_2m_max"), units.get("temperature_2m_max", "°C"))
    rain = _with_unit(pick("precipitation_sum"), units.get("precipitation_sum", "mm"))
    chance = pick("precipitation_probability_max")
    chance_text = f" ({chance}% chance)" if chance is not None else ""
    conditions = describe_code(pick("weather_code"))
    return f"{day} {weekday}{conditions}, {low} to {high}, precipitation {rain}{chance_text}"


def _with_unit(value: Any, unit: str) -> str:
    if value is None:
        return "n/a"
    spacer = "" if unit in ("%", "") else " "
    return f"{value}{spacer}{unit}"


def _degrees(value: float, positive: str, negative: str) -> str:
    return f"{abs(value):.2f}°{positive if value >= 0 else negative}"
