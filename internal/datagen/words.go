package datagen

// The vocabulary of generated records: Colombian cities and neighbourhoods,
// Spanish room, item and material names.

type city struct {
	name          string
	neighborhoods []string
}

var cities = []city{
	{"Bogotá", []string{"Chapinero", "Usaquén", "Teusaquillo", "Cedritos", "Modelia", "La Soledad"}},
	{"Medellín", []string{"El Poblado", "Laureles", "Belén", "Envigado", "La América"}},
	{"Cali", []string{"San Fernando", "Granada", "Ciudad Jardín", "El Peñón"}},
	{"Barranquilla", []string{"El Prado", "Alto Prado", "Riomar", "Villa Country"}},
	{"Bucaramanga", []string{"Cabecera del Llano", "Sotomayor", "Provenza"}},
	{"Cartagena", []string{"Bocagrande", "Manga", "Crespo"}},
}

var streets = []string{"Calle", "Carrera", "Avenida", "Diagonal", "Transversal"}

type propertyKind struct {
	name                 string
	minLevels, maxLevels int
}

var propertyKinds = []propertyKind{
	{"Apartamento", 1, 1},
	{"Apartaestudio", 1, 1},
	{"Casa", 2, 3},
	{"Dúplex", 2, 2},
	{"Local", 1, 2},
	{"Oficina", 1, 1},
}

var propertyDetails = []string{
	"Conjunto cerrado con portería 24 horas",
	"Incluye parqueadero cubierto",
	"Edificio con ascensor",
}

var rooms = []string{
	"Sala", "Comedor", "Cocina", "Baño principal", "Baño social", "Habitación principal",
	"Habitación 2", "Habitación 3", "Estudio", "Patio", "Zona de ropas", "Balcón", "Garaje", "Terraza",
}

var roomDescriptions = []string{"", "", "Buena iluminación natural", "Pintura reciente", "Humedad leve en una esquina"}

var itemNames = []string{
	"Puerta", "Ventana", "Piso", "Paredes", "Techo", "Interruptores", "Tomacorrientes", "Lámpara",
	"Cortinas", "Clóset", "Mesón", "Lavamanos", "Sanitario", "Ducha", "Espejo", "Rejilla",
}

// commentsByRating are what an inspector writes of an item of each rating:
// a to-repair item (2 or less) never "works fine", a 5 is never "broken".
// Each list is as long as the others, so that a rating's choice draws the
// same from the generator and the rest of a dataset stays as it was.
var commentsByRating = [6][]string{
	1: {"", "Roto", "No funciona", "Requiere reparación", "Desgaste severo", "Mancha visible", "Rayones profundos"},
	2: {"", "Requiere reparación", "Desgaste por uso", "Mancha visible", "Rayones profundos", "Funciona con fallas", "Desgaste severo"},
	3: {"", "", "Rayones leves", "Desgaste por uso", "Mancha visible", "Desgaste normal", "Sin novedad"},
	4: {"", "", "Sin novedad", "Rayones leves", "Desgaste normal", "Buen estado", "Funciona correctamente"},
	5: {"", "", "Sin novedad", "Buen estado", "Como nuevo", "Funciona correctamente", "Sin novedad"},
}

var materials = []string{
	"Madera", "Cerámica", "Porcelanato", "Vidrio", "Aluminio", "Drywall", "Concreto", "PVC",
	"Acero inoxidable", "Mármol", "Laminado", "Estuco",
}
