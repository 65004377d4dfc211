"""toolkit_weather_my against a local server answering in Open-Meteo's documented JSON shapes."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tea_agent_mini.config import ToolsConfig
from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import Toolkit
from tea_agent_mini.tools import weather

# Written after Open-Meteo's geocoding API documentation (GET /v1/search).
BERLIN_SEARCH = {
    "results": [
        {
            "id": 2950159,
            "name": "Berlin",
            "latitude": 52.52437,
            "longitude": 13.41053,
            "elevation": 74.0,
            "feature_code": "PPLC",
            "country_code": "DE",
            "admin1_id": 2950157,
            "timezone": "Europe/Berlin",
            "population": 3426354,
            "country_id": 2921044,
            "country": "Germany",
            "admin1": "Land Berlin",
        },
        {
            "id": 5083330,
            "name": "Berlin",
            "latitude": 44.46867,
            "longitude": -71.18508,
            "elevation": 311.0,
            "feature_code": "PPL",
            "country_code": "US",
            "admin1_id": 5090174,
            "admin2_id": 5084973,
            "timezone": "America/New_York",
            "population": 9367,
            "country_id": 6252001,
            "country": "United States",
            "admin1": "New Hampshire",
            "admin2": "Coos",
        },
    ],
    "generationtime_ms": 0.9160042,
}
NOTHING_FOUND = {"generationtime_ms": 0.4}

# Written after the forecast API documentation (GET /v1/forecast with current= and daily=).
FORECAST = {
    "latitude": 52.52,
    "longitude": 13.419998,
    "generationtime_ms": 0.0789165,
    "utc_offset_seconds": 3600,
    "timezone": "Europe/Berlin",
    "timezone_abbreviation": "GMT+1",
    "elevation": 38.0,
    "current_units": {
        "time": "iso8601",
        "interval": "seconds",
        "temperature_2m": "°C",
        "apparent_temperature": "°C",
        "relative_humidity_2m": "%",
        "precipitation": "mm",
        "weather_code": "wmo code",
        "wind_speed_10m": "km/h",
    },
    "current": {
        "time": "2025-01-15T14:00",
        "interval": 900,
        "temperature_2m": 3.2,
        "apparent_temperature": -0.4,
        "relative_humidity_2m": 81,
        "precipitation": 0.0,
        "weather_code": 3,
        "wind_speed_10m": 12.6,
    },
    "daily_units": {
        "time": "iso8601",
        "weather_code": "wmo code",
        "temperature_2m_max": "°C",
        "temperature_2m_min": "°C",
        "precipitation_sum": "mm",
        "precipitation_probability_max": "%",
    },
    "daily": {
        "time": ["2025-01-15", "2025-01-16", "2025-01-17"],
        "weather_code": [3, 61, 71],
        "temperature_2m_max": [4.5, 5.1, 1.2],
        "temperature_2m_min": [0.8, 2.3, -2.6],
        "precipitation_sum": [0.0, 3.4, 1.1],
        "precipitation_probability_max": [10, 75, None],
    },
}
BAD_REQUEST = {"error": True, "reason": "No data is available for this location"}


class OpenMeteo(BaseHTTPRequestHandler):
    requests: list[tuple[str, dict[str, list[str]]]]

    def log_message(self, *args):
        pass

    def do_GET(self):
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        self.requests.append((url.path, query))
        if url.path == "/v1/search":
            found = BERLIN_SEARCH if query["name"][0].lower() == "berlin" else NOTHING_FOUND
            self.reply(200, found)
        elif url.path == "/v1/forecast":
            if float(query["latitude"][0]) == 0:
                self.reply(400, BAD_REQUEST)
                return
            days = int(query["forecast_days"][0])
            payload = json.loads(json.dumps(FORECAST))
            payload["daily"] = {key: value[:days] for key, value in FORECAST["daily"].items()}
            self.reply(200, payload)
        else:
            self.reply(404, {"error": True, "reason": "Not Found"})

    def reply(self, status: int, payload: dict) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path, home=tmp_path / "home")


@pytest.fixture
def open_meteo(ctx: ToolContext) -> Iterator[list]:
    """A local Open-Meteo as ``ctx``'s tools.open_meteo_url and tools.geocoding_url; the
    requests it received."""
    requests: list = []
    handler = type("Handler", (OpenMeteo,), {"requests": requests})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    ctx.tools_config = ToolsConfig(
        open_meteo_url=f"{base}/v1/forecast", geocoding_url=f"{base}/v1/search"
    )
    try:
        yield requests
    finally:
        server.shutdown()
        server.server_close()


def test_place_name_is_geocoded_then_forecast(ctx, open_meteo):
    report = weather.toolkit_weather_my(ctx, location="Berlin")
    lines = report.splitlines()
    assert lines[0] == (
        "Weather for Berlin, Land Berlin, Germany (52.52°N, 13.42°E), timezone Europe/Berlin"
    )
    assert lines[1] == (
        "Now (2025-01-15 14:00): 3.2 °C, feels like -0.4 °C, overcast; humidity 81%, "
        "wind 12.6 km/h, precipitation 0.0 mm"
    )
    assert lines[2] == "Forecast:"
    assert lines[3] == (
        "  2025-01-15 Wed overcast, 0.8 to 4.5 °C, precipitation 0.0 mm (10% chance)"
    )
    assert lines[4] == (
        "  2025-01-16 Thu slight rain, 2.3 to 5.1 °C, precipitation 3.4 mm (75% chance)"
    )
    assert lines[5] == "  2025-01-17 Fri slight snowfall, -2.6 to 1.2 °C, precipitation 1.1 mm"
    assert "Open-Meteo" in lines[-1]

    (search_path, search), (forecast_path, forecast) = open_meteo
    assert search_path == "/v1/search"
    assert search["name"] == ["Berlin"] and search["language"] == ["en"]
    assert forecast_path == "/v1/forecast"
    assert forecast["latitude"] == ["52.52437"] and forecast["longitude"] == ["13.41053"]
    assert forecast["forecast_days"] == ["3"] and forecast["timezone"] == ["auto"]
    assert "weather_code" in forecast["current"][0].split(",")
    assert "temperature_2m_max" in forecast["daily"][0].split(",")


def test_region_after_a_comma_picks_among_namesakes(ctx, open_meteo):
    report = weather.toolkit_weather_my(ctx, location="Berlin, New Hampshire", days=1)
    assert report.startswith("Weather for Berlin, New Hampshire, United States")
    forecast = open_meteo[1][1]
    assert forecast["latitude"] == ["44.46867"] and forecast["forecast_days"] == ["1"]
    assert report.count("\n  20") == 1  # one forecast day
    assert weather.toolkit_weather_my(ctx, location="berlin, us").startswith(
        "Weather for Berlin, New Hampshire"
    )


def test_unknown_region_lists_what_was_found(ctx, open_meteo):
    with pytest.raises(ToolError, match="no 'Berlin' in Texas was found. Places found: Berlin, L"):
        weather.toolkit_weather_my(ctx, location="Berlin, Texas")


def test_unknown_place(ctx, open_meteo):
    with pytest.raises(ToolError, match="no place called 'Atlantis' was found"):
        weather.toolkit_weather_my(ctx, location="Atlantis")
    assert [path for path, _ in open_meteo] == ["/v1/search"]


def test_chinese_names_ask_for_chinese_results(ctx, open_meteo):
    with pytest.raises(ToolError):
        weather.toolkit_weather_my(ctx, location="杭州")
    assert open_meteo[0][1]["language"] == ["zh"]


def test_coordinates_skip_geocoding(ctx, open_meteo):
    report = weather.toolkit_weather_my(ctx, latitude=-33.87, longitude=151.21, days=2)
    assert report.startswith("Weather for -33.8700, 151.2100")
    assert [path for path, _ in open_meteo] == ["/v1/forecast"]
    assert open_meteo[0][1]["latitude"] == ["-33.87"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "give a location"),
        ({"latitude": 10.0}, "give both latitude and longitude"),
        ({"latitude": 95.0, "longitude": 10.0}, "coordinates out of range"),
        ({"location": "Berlin", "days": 17}, "days must be between 1 and 16"),
    ],
)
def test_argument_errors(ctx, open_meteo, kwargs, message):
    with pytest.raises(ToolError, match=message):
        weather.toolkit_weather_my(ctx, **kwargs)
    assert open_meteo == []


def test_service_error_reason_is_reported(ctx, open_meteo):
    with pytest.raises(ToolError, match="HTTP 400: No data is available for this location"):
        weather.toolkit_weather_my(ctx, latitude=0.0, longitude=0.0)


def test_unreachable_service(ctx):
    with socket.socket() as sock:  # a port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ctx.tools_config = ToolsConfig(geocoding_url=f"http://127.0.0.1:{port}/v1/search")
    with pytest.raises(ToolError, match="could not reach the weather service"):
        weather.toolkit_weather_my(ctx, location="Berlin")


def test_weather_codes_are_described():
    assert weather.describe_code(0) == "clear sky"
    assert weather.describe_code(95) == "thunderstorm"
    assert weather.describe_code(42) == "weather code 42"
    assert weather.describe_code(None) == "conditions unknown"


def test_registered_with_its_requirement():
    toolkit = Toolkit.load(["weather"])
    spec = toolkit.get("toolkit_weather_my")
    assert spec is not None and spec.requires == ("httpx",)
    assert not spec.mutates
