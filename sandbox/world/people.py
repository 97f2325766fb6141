"""People: buyers, attendees, comment authors, affiliates, partners, community members.

A person is derived from (seed, pid) and cached in a bounded LRU, so any record can cite a person by
pid and get the same name, e-mail, CPF, phone and address every time.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from operator import mul

from .rng import entity_key, mix64, record_key

FIRST = (
    "Ana",
    "João",
    "Maria",
    "José",
    "Francisca",
    "Antônio",
    "Adriana",
    "Carlos",
    "Juliana",
    "Paulo",
    "Márcia",
    "Pedro",
    "Fernanda",
    "Lucas",
    "Patrícia",
    "Luiz",
    "Aline",
    "Marcos",
    "Camila",
    "Gabriel",
    "Sandra",
    "Rafael",
    "Letícia",
    "Daniel",
    "Beatriz",
    "Bruno",
    "Larissa",
    "Eduardo",
    "Vanessa",
    "Felipe",
    "Débora",
    "Rodrigo",
    "Tatiane",
    "Gustavo",
    "Renata",
    "Mateus",
    "Cláudia",
    "André",
    "Simone",
    "Thiago",
    "Luana",
    "Vinícius",
    "Bianca",
    "Leonardo",
    "Priscila",
    "Diego",
    "Jéssica",
    "Caio",
)
LAST = (
    "Silva",
    "Santos",
    "Oliveira",
    "Souza",
    "Rodrigues",
    "Ferreira",
    "Alves",
    "Pereira",
    "Lima",
    "Gomes",
    "Costa",
    "Ribeiro",
    "Martins",
    "Carvalho",
    "Almeida",
    "Lopes",
    "Soares",
    "Fernandes",
    "Vieira",
    "Barbosa",
    "Rocha",
    "Dias",
    "Nascimento",
    "Andrade",
    "Moreira",
    "Nunes",
    "Marques",
    "Machado",
    "Mendes",
    "Freitas",
    "Cardoso",
    "Ramos",
    "Gonçalves",
    "Santana",
    "Teixeira",
    "Araújo",
    "Castro",
    "Conceição",
    "Pinto",
    "Correia",
)
# (city, state, area code, zip prefix)
CITIES = (
    ("São Paulo", "SP", "11", "01"),
    ("Campinas", "SP", "19", "13"),
    ("Rio de Janeiro", "RJ", "21", "20"),
    ("Niterói", "RJ", "21", "24"),
    ("Belo Horizonte", "MG", "31", "30"),
    ("Uberlândia", "MG", "34", "38"),
    ("Curitiba", "PR", "41", "80"),
    ("Londrina", "PR", "43", "86"),
    ("Porto Alegre", "RS", "51", "90"),
    ("Florianópolis", "SC", "48", "88"),
    ("Salvador", "BA", "71", "40"),
    ("Recife", "PE", "81", "50"),
    ("Fortaleza", "CE", "85", "60"),
    ("Belém", "PA", "91", "66"),
    ("Manaus", "AM", "92", "69"),
    ("Goiânia", "GO", "62", "74"),
    ("Brasília", "DF", "61", "70"),
    ("Vitória", "ES", "27", "29"),
    ("Natal", "RN", "84", "59"),
    ("São Luís", "MA", "98", "65"),
)
STREETS = (
    "Rua das Flores",
    "Avenida Brasil",
    "Rua XV de Novembro",
    "Rua Sete de Setembro",
    "Avenida Paulista",
    "Rua Tiradentes",
    "Rua São João",
    "Avenida Getúlio Vargas",
    "Rua Dom Pedro II",
    "Rua da Paz",
    "Avenida Atlântica",
    "Rua Barão do Rio Branco",
    "Rua Santos Dumont",
    "Rua Marechal Deodoro",
)
DISTRICTS = (
    "Centro",
    "Jardim América",
    "Vila Nova",
    "Boa Vista",
    "Santa Cruz",
    "São José",
    "Bela Vista",
    "Liberdade",
    "Jardim Paulista",
    "Copacabana",
    "Savassi",
    "Batel",
    "Moinhos de Vento",
    "Aldeota",
)
DOMAINS = ("gmail.com", "hotmail.com", "outlook.com", "yahoo.com.br", "uol.com.br", "example.com")
COMPLEMENTS = ("Apto 12", "Apto 301", "Casa 2", "Bloco B", "Fundos", "Sala 5")


def ascii_fold(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


FOLDED = {n: ascii_fold(n).lower() for n in FIRST + LAST}
W1 = (10, 9, 8, 7, 6, 5, 4, 3, 2)
W2 = (11, 10, 9, 8, 7, 6, 5, 4, 3)


def cpf_check_digits(nine: str) -> str:
    """The two check digits of a CPF whose first nine digits are `nine` (mod-11 rule, 10 -> 0)."""
    d = [ord(c) - 48 for c in nine]
    first = sum(map(mul, d, W1)) * 10 % 11 % 10
    second = (sum(map(mul, d, W2)) + 2 * first) * 10 % 11 % 10
    return f"{first}{second}"


def cpf_is_valid(document: str) -> bool:
    """True when `document` (digits, dots and dash allowed) is an 11-digit CPF with right check digits."""
    digits = document.strip().replace(".", "").replace("-", "")
    if len(digits) != 11 or not (digits.isascii() and digits.isdigit()) or len(set(digits)) == 1:
        return False
    return cpf_check_digits(digits[:9]) == digits[9:]


def make_cpf(h: int) -> str:
    """A valid CPF from 64 random bits."""
    nine = f"{h % 999_999_998 + 1:09d}"
    if len(set(nine)) == 1:  # 111.111.111-xx and the like are refused by validators
        nine = "1" + nine[1:] if nine[0] != "1" else "2" + nine[1:]
    return nine + cpf_check_digits(nine)


@dataclass(slots=True)
class Person:
    pid: int
    id: str  # platform account id (numeric string)
    name: str
    email: str
    document: str  # CPF, digits only
    country_code: str
    area_code: str
    number: str  # mobile number without area code
    city: str
    state: str
    zip_code: str
    street: str
    street_number: str
    district: str
    complement: str | None
    phone: str = ""
    addr: dict[str, str | None] = field(default_factory=dict)

    def address(self) -> dict[str, str | None]:
        """The sale buyer's address shape (built once per person; treat as read-only)."""
        return self.addr


class People:
    """Deterministic people of one world, by pid; a bounded cache keeps memory flat."""

    def __init__(self, seed: int):
        self._key = entity_key(seed, "person")
        self.get = lru_cache(maxsize=16384)(self._make)

    def _make(self, pid: int) -> Person:
        # Three 64-bit hashes sliced into fields: far cheaper than one generator step per field.
        h1 = record_key(self._key, pid)
        h2 = mix64(h1)
        h3 = mix64(h2)
        first = FIRST[h1 % len(FIRST)]
        last = LAST[(h1 >> 8) % len(LAST)]
        middle = LAST[(h1 >> 16) % len(LAST)] if h1 >> 63 else None
        name = f"{first} {middle} {last}" if middle else f"{first} {last}"
        email = f"{FOLDED[first]}.{FOLDED[last]}{pid}@{DOMAINS[(h1 >> 24) % len(DOMAINS)]}"
        city, state, area, zip_prefix = CITIES[(h1 >> 32) % len(CITIES)]
        number = f"9{h3 % 100_000_000:08d}"
        complement = COMPLEMENTS[(h1 >> 40) % len(COMPLEMENTS)] if (h1 >> 48) % 100 < 35 else None
        p = Person(
            pid,
            str(30_000_000 + pid),
            name,
            email,
            make_cpf(h2),
            "55",
            area,
            number,
            city,
            state,
            f"{zip_prefix}{(h3 >> 27) % 1_000_000:06d}",
            STREETS[(h2 >> 40) % len(STREETS)],
            str(1 + (h3 >> 47) % 3999),
            DISTRICTS[(h2 >> 50) % len(DISTRICTS)],
            complement,
        )
        p.phone = f"55{area}{number}"
        p.addr = {
            "zipCode": p.zip_code,
            "street": p.street,
            "number": p.street_number,
            "complement": complement,
            "neighborhood": p.district,
            "city": city,
            "state": state,
        }
        return p
