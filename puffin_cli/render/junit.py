"""``puffin validate --junit-xml``: a validation run as a JUnit XML report, as pytest writes
one, for CI servers (GitLab, Jenkins) to show as test results.

One ``testsuite`` (``puffin validate``) of one ``testcase`` per file, named by its path. A
finding that fails the file (an error; a warning too under ``--strict``, validate's own rule)
is a ``failure`` of its test case: ``type`` its code, ``message`` its message, the text where
it is (blob, byte offset); the other findings are the test case's ``system-out``. Text that
XML cannot hold (control characters, lone surrogates) is written as its backslash escape.
"""

from __future__ import annotations

import re
from xml.etree import ElementTree as ET

from puffin_cli.analysis.file_report import FileReport
from puffin_cli.analysis.validate import ValidationRun
from puffin_cli.format.findings import Finding, Severity

SUITE = "puffin validate"
# Characters XML 1.0 cannot hold: C0 controls but tab, newline and return; lone surrogates;
# U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub(lambda m: m.group().encode("ascii", "backslashreplace").decode(),
                        value)


def _fails(finding: Finding, strict: bool) -> bool:
    return finding.severity is Severity.ERROR or (strict and finding.severity is Severity.WARNING)


def _line(finding: Finding) -> str:
    where = finding.where
    return (f"{finding.severity.value} {finding.code}: {finding.message}"
            + (f" ({where})" if where else ""))


def _case(suite: ET.Element, report: FileReport, strict: bool) -> None:
    case = ET.SubElement(suite, "testcase", classname="puffin.validate",
                         name=_text(report.path), file=_text(report.path))
    others = []
    for finding in report.findings:
        if _fails(finding, strict):
            failure = ET.SubElement(case, "failure", type=_text(finding.code),
                                    message=_text(finding.message))
            failure.text = _text(_line(finding))
        else:
            others.append(_text(_line(finding)))
    if others:
        ET.SubElement(case, "system-out").text = "\n".join(others)


def junit_xml(run: ValidationRun) -> bytes:
    """The report: UTF-8 XML with its declaration."""
    root = ET.Element("testsuites", name=SUITE, tests=str(run.checked),
                      failures=str(run.failed), errors="0")
    suite = ET.SubElement(root, "testsuite", name=SUITE, tests=str(run.checked),
                          failures=str(run.failed), errors="0", skipped="0")
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="profile", value=_text(run.profile))
    ET.SubElement(properties, "property", name="strict", value=str(run.strict).lower())
    for report in run.files:
        _case(suite, report, run.strict)
    ET.indent(root)
    text: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return text + b"\n"
