"""Sample files of every type the server converts, made in memory for the tests."""

from __future__ import annotations

import io


def pdf(text: str) -> bytes:
    """A one-page PDF showing ``text`` in Helvetica (built by hand: objects, xref, trailer)."""
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    stream = f"BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET".encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def docx(text: str) -> bytes:
    import docx as python_docx

    document = python_docx.Document()
    document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def pptx(text: str) -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[6])
    slide.shapes.add_textbox(Inches(1), Inches(1), Inches(6), Inches(2)).text_frame.text = text
    out = io.BytesIO()
    presentation.save(out)
    return out.getvalue()


def xlsx(text: str) -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.append(["note", "value"])
    sheet.append([text, 42])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def html(text: str) -> bytes:
    head = "<head><style>p {}</style><script>var x;</script></head>"
    return f"<html>{head}<body><p>{text}</p></body></html>".encode()


def csv(text: str) -> bytes:
    return f'note,value\n"{text}",42\n'.encode()


SAMPLES = {
    ".txt": lambda t: t.encode(),
    ".md": lambda t: f"# Notes\n\n{t}\n".encode(),
    ".csv": csv,
    ".html": html,
    ".pdf": pdf,
    ".docx": docx,
    ".pptx": pptx,
    ".xlsx": xlsx,
}
