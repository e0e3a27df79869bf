"""A tool call's numbers: given by someone, or made up by the model."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from pheron_tui.core.call_format import with_named_options
from pheron_tui.core.grounding import (
    guessed_names,
    guessed_numbers,
    guessed_values,
    names_a_tool,
    options_named,
    stated_numbers,
    unasked_options,
    without_guessed_items,
    without_unasked,
)
from pheron_tui.core.messages import FunctionSpec, ToolSpec
from pheron_tui.core.tools import Tool, ToolContext, ToolResult


class FieldArgs(BaseModel):
    current: float
    distance: float
    permeability: float = 1.25e-6


class MagneticField(Tool):
    """A tool with required numbers, as BFCL's and many MCP servers' are."""

    name = "magnetic_field"
    description = "The magnetic field around a straight wire."
    Args = FieldArgs
    runs = 0
    last: FieldArgs | None = None

    async def run(self, args: FieldArgs, ctx: ToolContext) -> ToolResult:
        MagneticField.runs += 1
        MagneticField.last = args
        return ToolResult(ok=True, observation=f"{2e-7 * args.current / args.distance:.3g} T")


class RecipeArgs(BaseModel):
    ingredients: list[str]
    servings: int = 1


class RecipeSearch(Tool):
    """A tool with a required list of names."""

    name = "recipe_search"
    description = "Finds recipes that use the given ingredients."
    Args = RecipeArgs
    last: RecipeArgs | None = None

    async def run(self, args: RecipeArgs, ctx: ToolContext) -> ToolResult:
        RecipeSearch.last = args
        return ToolResult(ok=True, observation="Cheesy pasta: 20 minutes.")


def spec(tool: Tool) -> dict:
    return {"name": tool.name, "description": tool.description, "parameters": tool.parameters()}


def test_numbers_are_read_the_ways_people_write_them() -> None:
    text = (
        "A $1,500 loan at 5% for two years; 3e8 m/s; 50mH; scores [22,33,42]; 2.5k steps; "
        "half a dozen eggs; (33.4484 N, 112.0740 W); .5 litres"
    )
    stated = stated_numbers(text)
    for value in (1500, 5, 0.05, 2, 3e8, 50, 22, 33, 42, 2500, 0.5, 12, 33.4484, 112.074):
        assert value in stated, value
    # Read in the units a tool may want: SI prefixes, times in smaller units.
    scaled = stated_numbers("100µF and 50mH, 5 km, for 2 hours")
    for value in (1e-4, 0.05, 5000, 120, 7200):
        assert any(abs(value - n) <= 1e-9 * value for n in scaled), value
    # Periods: "monthly" compounding is 12 a year, "quarterly" 4, "next week" 7 days.
    periods = stated_numbers("compounded monthly, paid quarterly, for the next week")
    assert {12, 4, 7} <= periods
    # A time unit said alone is one of it: "the past hour" states 3,600 seconds.
    assert {60, 3600} <= stated_numbers("readings from the past hour")
    assert 86400 in stated_numbers("over the last day")
    # Digits inside names are not numbers anyone gave.
    assert stated_numbers("TIMEOUT_S2 and v2 and x3") == set()


@given(st.integers(min_value=-(10**9), max_value=10**9) | st.floats(-1e6, 1e6, allow_nan=False))
def test_a_number_written_in_the_request_is_never_a_guess(value: float) -> None:
    tool = MagneticField()
    request = f"What is the field at {value} m from a wire carrying {value!r} A?"
    assert guessed_numbers({"current": value, "distance": value}, spec(tool), request) == []


def test_required_numbers_nobody_gave_are_guesses() -> None:
    tool = MagneticField()
    symbols = "What is the magnetic field at distance r from a wire carrying current I?"
    assert guessed_numbers({"current": 10, "distance": 5}, spec(tool), symbols) == [10, 5]
    given_values = "What is the magnetic field 4 m from a wire carrying 2 A?"
    assert guessed_numbers({"current": 2, "distance": 4}, spec(tool), given_values) == []
    # An optional argument is the tool's business; 0 and 1 need no one to write them.
    optional = {"current": 2, "distance": 4, "permeability": 4e-7}
    assert guessed_numbers(optional, spec(tool), given_values) == []
    assert guessed_numbers({"current": 1, "distance": 0}, spec(tool), symbols) == []
    # A value the tool's own description states (a default, a range) is not a guess either.
    described = {**spec(tool), "description": "Distances above 100 m read as 100 m."}
    assert guessed_numbers({"current": 2, "distance": 100}, described, "2 A") == []


def test_optional_arguments_nobody_asked_for_are_left_to_the_tool() -> None:
    weather = {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "default": 1},
                "include_wind": {"type": "boolean"},
            },
            "required": ["city"],
        },
    }
    call = {"city": "Paris", "unit": "fahrenheit", "days": 3, "include_wind": True}
    plain = "What's the weather in Paris?"
    assert unasked_options(call, weather, plain) == ["unit", "days", "include_wind"]
    assert without_unasked(call, weather, plain) == {"city": "Paris"}
    asked = "Paris weather for the next 3 days in Fahrenheit, with the wind please"
    assert unasked_options(call, weather, asked) == []
    # A code or an abbreviation is a reading of what was said, not something added.
    circle = _tool("radius", optional=("unit",))
    assert unasked_options({"radius": 4, "unit": "in"}, circle, "radius of 4 inches?") == []
    assert unasked_options({"radius": 4, "unit": "in"}, circle, "radius of 4?") == ["unit"]
    speech = _tool("text", optional=("language",))
    assert unasked_options({"text": "hola", "language": "es-ES"}, speech, "in Spanish") == []
    ranking = _tool("sport", optional=("gender", "format"))
    said = "top player in woman tennis, in 24 hour format"
    assert (
        unasked_options({"sport": "tennis", "gender": "women", "format": "24h"}, ranking, said)
        == []
    )
    # A single letter is no abbreviation: the T and Z of a timestamp nobody gave say nothing.
    stamp = {"sport": "tennis", "format": "2023-04-12T14:00:00Z"}
    assert unasked_options(stamp, ranking, "the top tennis player") == ["format"]
    # The schema's own default changes nothing, and a required argument is never dropped.
    assert unasked_options({"city": "Lyon", "days": 1}, weather, plain) == []


def test_an_option_the_request_picks_out_is_asked_for() -> None:
    """The tool's own options are the model's to choose from: a word said that starts like
    one ("Comic" for "Comedy"), or the parameter's name said for a flag written as an
    option ("free" for free_entry "True"), is a sign it was asked for."""
    movies = {
        "parameters": {
            "type": "object",
            "properties": {
                "cast": {"type": "string"},
                "genre": {"type": "string", "enum": ["Comedy", "Drama", "Action", "dontcare"]},
                "free_entry": {"type": "string", "enum": ["True", "False", "dontcare"]},
            },
            "required": [],
        }
    }
    call = {"cast": "James Corden", "genre": "Comedy"}
    assert unasked_options(call, movies, "a movie in the Comic genre with James Corden") == []
    assert unasked_options(call, movies, "a movie with James Corden") == ["genre"]
    # A shared start is not enough where the rest of the word differs.
    assert unasked_options({"genre": "Action"}, movies, "actually, James Corden") == ["genre"]
    flag = {"free_entry": "True"}
    assert unasked_options(flag, movies, "attractions in Paris with free entry") == []
    assert unasked_options(flag, movies, "attractions in Paris") == ["free_entry"]


def test_a_list_of_options_the_request_picks_out_is_asked_for() -> None:
    """A list of the tool's options reads as each option does: "vegetarian and gluten-free"
    picks ["vegan", "gluten-free"]; a list with an option nothing picks was not asked."""
    shop = {
        "parameters": {
            "type": "object",
            "properties": {
                "location": {"type": "string"},
                "categories": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["vegan", "gluten-free", "organic"]},
                },
            },
            "required": ["location"],
        }
    }
    call = {"location": "Denver", "categories": ["vegan", "gluten-free"]}
    assert unasked_options(call, shop, "vegetarian and gluten-free foods near Denver") == []
    assert unasked_options(call, shop, "gluten-free foods near Denver") == ["categories"]
    assert unasked_options(call, shop, "foods near Denver") == ["categories"]


def test_words_every_request_has_give_no_sign_of_an_option() -> None:
    """ "Please deliver to the front door" shares only "to" and "the" with an order that gave
    no instructions: left out. Said, it stays."""
    order = _tool("item", optional=("instructions",))
    call = {"item": "burger", "instructions": "Please deliver to the front door"}
    plain = "Order five burgers to the office from the McDonald's on Main Street"
    assert unasked_options(call, order, plain) == ["instructions"]
    assert unasked_options(call, order, "five burgers, leave them at the door") == []


def test_an_optional_date_is_read_as_the_value_check_reads_one() -> None:
    """ "2023-03-09" for "on March 9th" was said; a date for "tonight" was not."""
    weather = _tool("city", optional=("date",))
    asked = {"city": "Los Angeles", "date": "2023-03-09"}
    assert unasked_options(asked, weather, "How's the weather in LA on March 9th?") == []
    guessed = {"city": "Los Angeles", "date": "2023-04-15"}
    assert unasked_options(guessed, weather, "How's the weather in LA tonight?") == ["date"]


def test_an_option_the_request_names_makes_its_parameter_one_to_set() -> None:
    """ "Find a comedy movie": the genre has a "Comedy" option, so the first step's call must
    set it (the 1.5B model left it out); a word that only starts like one does not count."""
    movies = {
        "type": "object",
        "properties": {
            "cast": {"type": "string"},
            "genre": {"type": "string", "enum": ["Comedy", "Comedy-drama", "Drama"]},
        },
        "required": ["cast"],
    }
    assert options_named(movies, "Find a comedy with Bill Murray") == ["genre"]
    assert options_named(movies, "Find a movie with Bill Murray") == []
    assert options_named(movies, "a comic with Bill Murray") == []
    spec = ToolSpec(function=FunctionSpec(name="find_movies", description="", parameters=movies))
    [tight] = with_named_options([spec], "a drama with Bill Murray")
    assert tight.function.parameters["required"] == ["cast", "genre"]
    assert spec.function.parameters["required"] == ["cast"]  # the registry's own is kept


def test_a_placeholder_for_a_value_is_left_to_the_tool() -> None:
    """ "your_device_id" for device_id, "current_date" for movie_date: the model had no value
    and wrote the parameter's name; the tool's default is what it meant."""
    player = _tool("song", optional=("device_id", "movie_date"))
    said = "Play Roar on my device today, then list movies for this date"
    assert unasked_options({"song": "Roar", "device_id": "your_device_id"}, player, said) == [
        "device_id"
    ]
    assert unasked_options({"song": "Roar", "movie_date": "current_date"}, player, said) == [
        "movie_date"
    ]
    assert unasked_options({"song": "Roar", "device_id": "kitchen"}, player, "on kitchen") == []
    # A value that says there is none, or that the default applies, says it by being left out.
    for none in ("default", "None", "null"):
        assert unasked_options({"song": "Roar", "movie_date": none}, player, said) == ["movie_date"]
    # A placeholder word alone may be the value: an electric current is a metric.
    meter = _tool("sensor", optional=("metric",))
    assert unasked_options({"sensor": "s4", "metric": "current"}, meter, "the current at s4") == []
    # Written as a stand-in, whatever it names; in a list, any item.
    sensors = _tool("metric", optional=("serials", "key"))
    said = "the lowest temperature across all my sensors"
    stand_ins = {"metric": "temperature", "serials": ["your_sensor_serial"], "key": "<api_key>"}
    assert unasked_options(stand_ins, sensors, said) == ["serials", "key"]


def test_a_number_the_description_keys_to_something_said_is_asked_for() -> None:
    """ "1 for cleaning service, 2 for ironing service": 2 is the ironing the user asked for."""
    providers = {
        "parameters": {
            "type": "object",
            "properties": {
                "service_id": {
                    "type": "integer",
                    "description": "Example: 2 for ironing service, 3 for massage service.",
                },
            },
            "required": [],
        }
    }
    ironing = "Find a housekeeper who provides ironing services in Bangkok"
    assert unasked_options({"service_id": 2}, providers, ironing) == []
    assert unasked_options({"service_id": 3}, providers, ironing) == ["service_id"]
    assert unasked_options({"service_id": 2}, providers, "Find a housekeeper") == ["service_id"]


def test_a_number_too_long_for_a_float_is_a_guess_not_a_crash() -> None:
    """JSON lets a model write an int of 4,000 digits; float() of it raises OverflowError,
    which had ended the turn with an internal error on the first step's value check."""
    huge = int("9" * 4000)
    tool = MagneticField()
    said = "What is the magnetic field 4 m from a wire carrying 2 A?"
    assert guessed_numbers({"current": huge, "distance": 4}, spec(tool), said) == [float("inf")]
    assert guessed_numbers({"current": 2, "distance": -huge}, spec(tool), said) == [float("-inf")]
    keyed = {
        "parameters": {
            "type": "object",
            "properties": {"service_id": {"type": "integer", "description": "2 for ironing."}},
            "required": ["city"],
        }
    }
    call = {"city": "Bangkok", "service_id": huge}
    assert unasked_options(call, keyed, "ironing in Bangkok") == ["service_id"]
    assert without_unasked(call, keyed, "ironing in Bangkok") == {"city": "Bangkok"}


def test_text_in_another_script_is_not_judged() -> None:
    """Words and numerals cannot be matched across scripts: "摄氏度" asks for celsius."""
    tool = MagneticField()
    chinese = "离一根载有两安培电流的导线四米处的磁场是多少？请使用摄氏度。"
    assert guessed_numbers({"current": 2, "distance": 4}, spec(tool), chinese) == []
    asked = {"current": 2, "distance": 4, "permeability": 4e-7}
    assert unasked_options(asked, spec(tool), chinese) == []


def _tool(*required: str, optional: tuple[str, ...] = ("note",)) -> dict:
    properties = {name: {"type": "string"} for name in (*required, *optional)}
    return {
        "name": "lookup",
        "description": "Looks a thing up.",
        "parameters": {"type": "object", "properties": properties, "required": list(required)},
    }


def test_names_and_dates_nobody_said_are_guesses() -> None:
    """Asked "Who won the NBA MVP in 2020?" with a player-stats tool, the 1.5B model called it
    for LeBron James; asked about a game "tonight", it dated it 2023-04-15."""
    player = _tool("player_name")
    assert guessed_names(
        {"player_name": "LeBron James"}, player, "Who won the NBA MVP in 2020?"
    ) == ["LeBron James"]
    assert guessed_names({"player_name": "LeBron James"}, player, "LeBron James's assists?") == []
    game = _tool("venue", "date")
    tonight = "Who is playing at Madison Square Garden tonight?"
    call = {"venue": "Madison Square Garden", "date": "2023-04-15"}
    assert guessed_names(call, game, tonight) == ["2023-04-15"]
    ids = _tool("case_id")
    assert guessed_names({"case_id": "U54EEF2"}, ids, "Cases handled by firm ABC?") == ["U54EEF2"]
    # Together with the numbers, in the order the message to the model names them.
    assert guessed_values(call, game, tonight) == ["2023-04-15"]


def test_readings_of_what_was_said_are_not_guesses() -> None:
    tool = _tool("value")
    readings = [
        ("US dollars to euros", "USD"),
        ("on April 4th", "2023-04-04"),
        ("from 7 PM", "19:00"),
        ("2 in the afternoon", "14:00"),
        ("a hotel in LA", "Los Angeles, CA"),
        ("flights out of LAX", "Los Angeles"),
        ("weather in NYC", "New York City"),
        ("fries from mc donalds", "McDonald's"),
        ("weather for Chcicago", "Chicago"),
        ("the painting called the scream", "The Scream"),
        ("what is the lowest price", "lowest price"),  # names nothing: not judged here
    ]
    for said, value in readings:
        assert guessed_names({"value": value}, tool, said) == [], (said, value)
    # Content is new by nature: a poem, a message, a file's text are not names.
    poem = "Autumn Moon over Kyoto, silver light on the Kamo river, Basho would smile."
    assert guessed_names({"value": poem}, tool, "write me a haiku") == []
    # An optional argument, and a value the tool's own description gives, are not judged.
    assert guessed_names({"value": "Paris", "note": "Roger Federer"}, tool, "visit Paris") == []
    described = {**tool, "description": "A city, e.g. Seattle, WA."}
    assert guessed_names({"value": "Seattle, WA"}, described, "a yoga mat in store") == []


@given(
    st.lists(st.from_regex(r"[A-Z][a-z]{2,8}|[0-9]{1,4}", fullmatch=True), min_size=1, max_size=4)
)
def test_a_name_made_of_the_requests_own_words_is_never_a_guess(words: list[str]) -> None:
    request = "Please look up " + " and ".join(words) + " for me."
    value = " ".join(words)
    assert guessed_names({"value": value}, _tool("value"), request) == []


def test_a_request_names_a_tool_by_the_words_of_its_name() -> None:
    """Half the words of a tool's name or more, one of them more than an action word."""
    assert names_a_tool(
        "Solve a quadratic equation where a=2, b=6, c=5", ["solve_quadratic_equation"]
    )
    assert names_a_tool("What is the sum of 133 and 34?", ["get_weather", "calculate_sum"])
    assert names_a_tool("Calculate the BMI of a person who weighs 70kg", ["calculateBMI"])
    assert names_a_tool("Which chord progressions use these?", ["music.theory.chordProgression"])
    # Only the action is said, or too few of the words: the tool is not named.
    assert not names_a_tool("Calculate the area of a circle", ["calculate_bmi"])
    assert not names_a_tool("Find the fastest route to Boston", ["find_prime_numbers_in_range"])
    assert not names_a_tool("What is the capital of France?", ["read_file", "list_dir"])


def test_a_call_the_model_did_not_choose_is_judged_on_every_value() -> None:
    """Made to call against its own odds, the model needs 0 and 1 stated too, and each
    required string in words that were said ("large" for a sculpture's size nobody gave)."""
    tool = spec(MagneticField())
    zero_one = {"current": 1, "distance": 0}
    assert guessed_values(zero_one, tool, "the field of a wire") == []
    assert guessed_values(zero_one, tool, "the field of a wire", chosen=False) == [1, 0]
    assert guessed_values({"current": 1, "distance": 4}, tool, "1 A at 4 m", chosen=False) == []
    sculpture = _tool("design", "size")
    asked = "What type of rock suits a garden sculpture?"
    made_up = {"design": "garden sculpture", "size": "large"}
    assert guessed_values(made_up, sculpture, asked) == []
    assert guessed_values(made_up, sculpture, asked, chosen=False) == ["large"]
    assert guessed_values(made_up, sculpture, "a large garden sculpture", chosen=False) == []


def test_a_list_of_names_keeps_the_items_said_and_loses_the_ones_made_up() -> None:
    """Asked for "a vegetarian pasta with cheese", the 1.5B model searched for ["Pasta",
    "Tomato sauce", "Cheese"]: the call is the one asked for, less the sauce. A list of which
    nothing was said, or of numbers, is left whole for the value check to judge."""
    tool = spec(RecipeSearch())
    asked = "Give me a recipe for a vegetarian pasta with cheese for 2 servings."
    padded = {"ingredients": ["Pasta", "Tomato sauce", "Cheese"], "servings": 2}
    assert guessed_values(padded, tool, asked) == ["Tomato sauce"]
    trimmed = without_guessed_items(padded, tool, asked)
    assert trimmed == {"ingredients": ["Pasta", "Cheese"], "servings": 2}
    assert guessed_values(trimmed, tool, asked) == []
    assert padded["ingredients"] == ["Pasta", "Tomato sauce", "Cheese"]  # not changed in place
    invented = {"ingredients": ["Basil", "Tomato sauce"]}
    assert without_guessed_items(invented, tool, asked) == invented
    scores = _tool("answers")
    scores["parameters"]["properties"]["answers"] = {"type": "array", "items": {"type": "number"}}
    data = {"answers": [5, 3, 4]}
    assert without_guessed_items(data, scores, "my answer to the first question was 5") == data
    # Made to call, each item must be in words that were said.
    assert without_guessed_items(
        {"ingredients": ["pasta", "sauce"]}, tool, asked, chosen=False
    ) == {"ingredients": ["pasta"]}
