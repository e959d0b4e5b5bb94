"""From pyiceberg FileIO properties and the standard environment to obstore store settings.

Order (later wins): each cloud's environment variables (read by obstore itself), the
``~/.aws`` files for the profile (``AWS_PROFILE``, else ``default``) when the environment holds
no AWS key, then the properties (``--io KEY=VALUE``, a catalog's table properties).

=================================  =====================================================
property (pyiceberg name)          meaning
=================================  =====================================================
s3.endpoint                        S3 endpoint URL; ``http://`` allows plain HTTP and
                                   path-style requests (MinIO, a local test server)
s3.access-key-id                   AWS access key (also ``client.access-key-id``)
s3.secret-access-key               AWS secret key (also ``client.secret-access-key``)
s3.session-token                   AWS session token (also ``client.session-token``)
s3.region                          AWS region (also ``client.region``)
s3.force-virtual-addressing        ``true``: virtual-hosted-style requests
s3.anonymous                       ``true``: unsigned requests (public buckets)
s3.role-arn, s3.role-session-name  a role to assume with a web identity token
gcs.service.host                   GCS endpoint URL (an emulator)
gcs.oauth2.token                   a bearer token
gcs.anonymous                      ``true``: unsigned requests
adls.account-name                  Azure storage account (for ``az://container/...``)
adls.account-key                   its key
adls.sas-token                     a SAS token (also ``adls.sas-token.<account host>``)
adls.tenant-id, adls.client-id,    a service principal
adls.client-secret
adls.connection-string             ``AccountName=...;AccountKey=...;BlobEndpoint=...``
adls.account-host                  the blob endpoint URL (Azurite)
=================================  =====================================================
"""

from __future__ import annotations

import configparser
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_TRUE = ("true", "1", "yes", "on")

S3_PROPERTIES = {
    "s3.endpoint": "endpoint",
    "s3.access-key-id": "access_key_id",
    "s3.secret-access-key": "secret_access_key",
    "s3.session-token": "session_token",
    "s3.region": "region",
    "s3.role-arn": "role_arn",
    "s3.role-session-name": "role_session_name",
    "client.access-key-id": "access_key_id",
    "client.secret-access-key": "secret_access_key",
    "client.session-token": "session_token",
    "client.region": "region",
}
S3_FLAGS = {"s3.force-virtual-addressing": "virtual_hosted_style_request",
            "s3.anonymous": "skip_signature"}
GCS_PROPERTIES = {"gcs.service.host": "base_url", "gcs.oauth2.token": "bearer_token"}
ADLS_PROPERTIES = {
    "adls.account-name": "account_name",
    "adls.account-key": "account_key",
    "adls.sas-token": "sas_key",
    "adls.tenant-id": "tenant_id",
    "adls.client-id": "client_id",
    "adls.client-secret": "client_secret",
    "adls.account-host": "endpoint",
}
KNOWN_PREFIXES = ("s3.", "gcs.", "adls.", "client.", "py-io-impl")


@dataclass
class StoreSettings:
    """What an obstore store is built with."""

    config: dict[str, Any] = field(default_factory=dict)
    client_options: dict[str, Any] = field(default_factory=dict)
    endpoint: str | None = None


def _flag(value: str) -> bool:
    return value.strip().lower() in _TRUE


def _aws_profile(env: Mapping[str, str]) -> dict[str, str]:
    """Keys, token, region and endpoint of the profile in the ``~/.aws`` files."""
    profile = env.get("AWS_PROFILE") or env.get("AWS_DEFAULT_PROFILE") or "default"
    home = os.path.expanduser("~")
    found: dict[str, str] = {}
    sources = ((env.get("AWS_SHARED_CREDENTIALS_FILE") or os.path.join(home, ".aws",
                                                                       "credentials"),
                profile),
               (env.get("AWS_CONFIG_FILE") or os.path.join(home, ".aws", "config"),
                profile if profile == "default" else f"profile {profile}"))
    for path, section in sources:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, OSError, UnicodeDecodeError):
            continue
        if parser.has_section(section):
            for key, value in parser.items(section):
                found.setdefault(key, value)
    out = {}
    for key, setting in (("aws_access_key_id", "access_key_id"),
                         ("aws_secret_access_key", "secret_access_key"),
                         ("aws_session_token", "session_token"), ("region", "region"),
                         ("endpoint_url", "endpoint")):
        if found.get(key):
            out[setting] = found[key]
    return out


def s3_settings(properties: Mapping[str, str],
                env: Mapping[str, str] | None = None) -> StoreSettings:
    env = os.environ if env is None else env
    settings = StoreSettings()
    config = settings.config
    if not env.get("AWS_ACCESS_KEY_ID"):
        profile = _aws_profile(env)
        if "access_key_id" not in profile:
            profile = {k: v for k, v in profile.items() if k in ("region", "endpoint")}
        config.update(profile)
    if env.get("AWS_DEFAULT_REGION") and not env.get("AWS_REGION"):
        config.setdefault("region", env["AWS_DEFAULT_REGION"])
    for key, value in properties.items():
        if key in S3_PROPERTIES:
            config[S3_PROPERTIES[key]] = value
        elif key in S3_FLAGS:
            config[S3_FLAGS[key]] = _flag(value)
    endpoint = (config.get("endpoint") or env.get("AWS_ENDPOINT_URL_S3")
                or env.get("AWS_ENDPOINT_URL") or env.get("AWS_ENDPOINT"))
    if endpoint:
        settings.endpoint = endpoint
        if endpoint.lower().startswith("http://"):
            settings.client_options["allow_http"] = True
    return settings


def s3_has_credentials(settings: StoreSettings, env: Mapping[str, str] | None = None) -> bool:
    """Whether keys, a token source or unsigned requests are configured (instance metadata
    credentials are not known in advance)."""
    env = os.environ if env is None else env
    config = settings.config
    return bool(config.get("access_key_id") or env.get("AWS_ACCESS_KEY_ID")
                or config.get("skip_signature") or _flag(env.get("AWS_SKIP_SIGNATURE", ""))
                or env.get("AWS_WEB_IDENTITY_TOKEN_FILE")
                or env.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
                or env.get("AWS_CONTAINER_CREDENTIALS_FULL_URI"))


def gcs_settings(properties: Mapping[str, str]) -> StoreSettings:
    settings = StoreSettings()
    for key, value in properties.items():
        if key in GCS_PROPERTIES:
            settings.config[GCS_PROPERTIES[key]] = value
        elif key == "gcs.anonymous":
            settings.config["skip_signature"] = _flag(value)
    base = settings.config.get("base_url")
    if base:
        settings.endpoint = base
        if base.lower().startswith("http://"):
            settings.client_options["allow_http"] = True
    return settings


def _connection_string(text: str) -> dict[str, str]:
    parts = dict(p.split("=", 1) for p in text.split(";") if "=" in p)
    out = {}
    for key, setting in (("AccountName", "account_name"), ("AccountKey", "account_key"),
                         ("BlobEndpoint", "endpoint"), ("SharedAccessSignature", "sas_key")):
        if parts.get(key):
            out[setting] = parts[key]
    return out


def adls_settings(properties: Mapping[str, str], account: str | None,
                  env: Mapping[str, str] | None = None) -> StoreSettings:
    env = os.environ if env is None else env
    settings = StoreSettings()
    config = settings.config
    if "adls.connection-string" in properties:
        config.update(_connection_string(properties["adls.connection-string"]))
    for key, value in properties.items():
        if key in ADLS_PROPERTIES:
            config[ADLS_PROPERTIES[key]] = value
    if account:
        config["account_name"] = account
        for key, value in properties.items():
            if key.startswith("adls.sas-token.") and key[len("adls.sas-token."):].split(".")[0] \
                    == account:
                config["sas_key"] = value
    # the variables obstore reads itself; an http:// one (Azurite) must allow plain HTTP
    endpoint = (config.get("endpoint") or env.get("AZURE_STORAGE_ENDPOINT")
                or env.get("AZURE_ENDPOINT"))
    if endpoint:
        settings.endpoint = endpoint
        if endpoint.lower().startswith("http://"):
            settings.client_options["allow_http"] = True
    return settings


def unknown_properties(properties: Mapping[str, str]) -> list[str]:
    """Keys that no backend reads (probably misspelt)."""
    known = {*S3_PROPERTIES, *S3_FLAGS, *GCS_PROPERTIES, *ADLS_PROPERTIES,
             "adls.connection-string", "gcs.anonymous"}
    return [k for k in properties
            if k not in known and not k.startswith("adls.sas-token.")
            and not k.startswith(KNOWN_PREFIXES)]
