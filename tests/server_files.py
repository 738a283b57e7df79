"""Sample files of every type the server converts, made in memory for the tests."""

from __future__ import annotations

import io
import random
import zipfile


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


def docx_of_letters(letters: str) -> bytes:
    """A Word file with one paragraph per letter of ``letters``: long and repetitive,
    a decompression bomb (its ``word/document.xml`` is ~34 bytes a letter)."""
    template = zipfile.ZipFile(io.BytesIO(docx("x")))
    xml = template.read("word/document.xml").decode()
    head, rest = xml.split("<w:body>", 1)
    body = "".join(f"<w:p><w:r><w:t>{c}</w:t></w:r></w:p>" for c in letters)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for member in template.infolist():
            data = template.read(member.filename)
            if member.filename == "word/document.xml":
                data = f"{head}<w:body>{body}{rest[rest.index('<w:sectPr') :]}".encode()
            archive.writestr(member.filename, data)
    return out.getvalue()


def docx_bomb(paragraphs: int = 700_000) -> bytes:
    """~24 MB of XML in ~130 KB: the letter changes every 64 paragraphs (~250 times compressed)."""
    rng = random.Random(22)
    return docx_of_letters("".join(rng.choice("abcdefghij") * 64 for _ in range(paragraphs // 64)))


def docx_amplifier(paragraphs: int = 700_000) -> bytes:
    """~24 MB of XML compressed only ~10 times (no bomb by its ratio), whose parse still
    takes far more memory than the file: a random letter per paragraph."""
    rng = random.Random(22)
    return docx_of_letters("".join(rng.choice("abcdefghij") for _ in range(paragraphs)))


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
