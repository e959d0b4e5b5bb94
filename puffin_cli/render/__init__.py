"""Human (rich) and machine (JSON) output, from the same result dataclasses."""
